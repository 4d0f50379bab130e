// Every mover of the serving counter goes through the admission module (src/domain/admission/): the store
// operations that can move the counter are used nowhere else in src/, except inside the stores themselves (a
// store forwarding to its backend is the same operation). Checked with the TypeScript compiler, so a call is
// recognised by what it resolves to — the store port or a store class — not by its receiver's name:
// WaitingRoomService.advanceExpiry (the job's entry, which delegates to the Admission) is not a store call.

import assert from 'node:assert/strict';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The store operations that move a room's serving counter (resetEvent zeroes it with everything else: not an admission). */
const COUNTER_MOVERS = new Set(['incrementServing', 'incrementServingWithinQueue', 'advanceExpiry']);
const ADMISSION = 'src/domain/admission/';
const STORE_PORT = 'src/domain/ports/store.ts';
const STORES = 'src/store/';

const rel = (file: string) => relative(ROOT, file).split(sep).join('/');

interface Use {
  file: string;
  line: number;
  text: string;
}

/** Every use in src/ of a counter-moving store operation (calls, references, destructuring), declarations aside. */
function counterMoverUses(): Use[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  assert.ok(parsed, 'tsconfig.json is readable');
  const sources = parsed.fileNames.filter((file) => rel(file).startsWith('src/'));
  const program = ts.createProgram(sources, parsed.options);
  const checker = program.getTypeChecker();
  const uses: Use[] = [];
  for (const source of program.getSourceFiles()) {
    const file = rel(source.fileName);
    if (!file.startsWith('src/')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && COUNTER_MOVERS.has(node.text)) {
        // In `const { incrementServing } = store` the name resolves to the new variable: ask the pattern's type.
        const destructured = ts.isBindingElement(node.parent) && ts.isObjectBindingPattern(node.parent.parent);
        const symbol = destructured
          ? checker.getTypeAtLocation(node.parent.parent).getProperty(node.text)
          : checker.getSymbolAtLocation(node);
        const declarations = symbol?.declarations ?? [];
        const isDeclaration = declarations.some((d) => (d as ts.NamedDeclaration).name === node);
        const onAStore = declarations.some((d) => {
          const where = rel(d.getSourceFile().fileName);
          return where === STORE_PORT || where.startsWith(STORES);
        });
        if (onAStore && !isDeclaration) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          uses.push({ file, line: line + 1, text: node.parent.getText(source) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return uses;
}

describe('admission is one module', () => {
  const uses = counterMoverUses();

  it('the store operations that move the serving counter are used only by src/domain/admission/ (and the stores)', () => {
    const outside = uses.filter((u) => !u.file.startsWith(ADMISSION) && !u.file.startsWith(STORES));
    assert.deepEqual(
      outside.map((u) => `${u.file}:${u.line} ${u.text}`),
      [],
      'move the serving counter through WaitingRoomService.admit (src/domain/admission/admission.ts)',
    );
  });

  it('the admission module does use each of them (the check above finds what it looks for)', () => {
    const found = new Set(uses.filter((u) => u.file.startsWith(ADMISSION)).map((u) => u.text.split('.').at(-1)));
    assert.deepEqual([...found].sort(), [...COUNTER_MOVERS].sort());
  });
});
