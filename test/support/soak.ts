// The flakiness routine of docs/testing.md: the whole suite 3 times in a row beside a busy core, and each test
// file a change touches 10 times in a row (--files).
//
//   node test/support/soak.ts [--runs 3] [--busy 1] [--logs DIR] [--randomize] [--keep-going] [--command CMD]
//   node test/support/soak.ts --runs 10 --files "test/a.test.ts test/b.test.ts"
//
// Starts --busy copies of test/support/busy-core.ts (default 1), runs the suite --runs times (default 3), one
// run after the other, each run's output in DIR/run-NN.log (default a new temporary folder), and stops at the
// first failing run unless --keep-going. The suite is `npm test`; with --randomize, the same command with
// `--test-randomize` (each run another order; node:test prints the seed in the log); --command runs another
// shell command instead (a part of the suite, say); --files runs `npm test`'s command on those files only
// (its pages' build and packages check first). Exits 1 if a run failed.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    files: { type: 'string' },
    busy: { type: 'string', default: '1' },
    logs: { type: 'string' },
    randomize: { type: 'boolean', default: false },
    'keep-going': { type: 'boolean', default: false },
    command: { type: 'string' },
  },
});
const runs = Number(values.runs);
const busy = Number(values.busy);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(busy) || busy < 0) {
  console.error('usage: node test/support/soak.ts [--runs 3] [--busy 1] [--logs DIR] [--randomize] [--keep-going] [--command CMD | --files "F1 F2"]');
  process.exit(2);
}
const logs = values.logs ?? mkdtempSync(join(tmpdir(), 'anteroom-soak-'));
mkdirSync(logs, { recursive: true });
const root = fileURLToPath(new URL('../..', import.meta.url));
const busyCore = fileURLToPath(new URL('./busy-core.ts', import.meta.url));

// `npm test`; with --randomize, its pretest (the pages' build) and then its command with --test-randomize
// added right after `--test` (node takes no option after the file pattern), with node_modules/.bin first on
// PATH as npm would.
const testScript = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;
const suite: [string, string[]] = values.command !== undefined
  ? ['sh', ['-c', values.command]]
  : values.files !== undefined
  ? ['sh', ['-c', `npm run pretest && ${testScript.replace('"test/**/*.test.ts"', values.files)}`]]
  : values.randomize
  ? ['sh', ['-c', `npm run pretest && ${testScript.replace('node --test ', 'node --test --test-randomize ')}`]]
  : ['npm', ['test']];
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };

const burners: ChildProcess[] = [];
for (let i = 0; i < busy; i++) {
  burners.push(spawn(process.execPath, [busyCore, '--seconds', String(6 * 3600)], { stdio: ['ignore', 'inherit', 'inherit'] }));
}
const stopBurners = () => {
  for (const burner of burners) if (burner.exitCode === null) burner.kill('SIGTERM');
};
process.on('exit', stopBurners);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

console.log(`soak: ${runs} run(s) of ${suite[0] === 'npm' ? 'npm test' : suite[1].at(-1)} beside ${busy} busy core(s); logs in ${logs}`);
const failed: number[] = [];
for (let run = 1; run <= runs; run++) {
  const file = join(logs, `run-${String(run).padStart(2, '0')}.log`);
  const started = Date.now();
  const status = await new Promise<number | null>((resolve) => {
    const out = createWriteStream(file);
    const child = spawn(suite[0], suite[1], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('close', (code) => out.end(() => resolve(code)));
  });
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  if (status === 0) {
    console.log(`run ${run}/${runs}: pass (${minutes} min)`);
    continue;
  }
  failed.push(run);
  const text = readFileSync(file, 'utf8');
  const failures = [...new Set(text.split('\n').filter((line) => /^\s*✖/.test(line)).map((line) => line.trim()))];
  console.log(`run ${run}/${runs}: FAIL (exit ${status}, ${minutes} min), ${file}\n  ${failures.slice(0, 20).join('\n  ')}`);
  if (!values['keep-going']) break;
}
stopBurners();
// The burners print how much they hashed before the summary.
await Promise.all(burners.map((burner) => (burner.exitCode === null ? once(burner, 'exit') : undefined)));
console.log(failed.length === 0 ? `\nsoak: all ${runs} runs passed` : `\nsoak: run(s) ${failed.join(', ')} failed; logs in ${logs}`);
process.exit(failed.length === 0 ? 0 : 1);
