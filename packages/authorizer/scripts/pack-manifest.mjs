// In the repository the package's `exports` point at its TypeScript sources, so the server (which imports
// `anteroom-authorizer` through the workspace link) and the tests run the code being edited, with no build
// step. Node does not strip types inside node_modules, so the tarball must point at the compiled dist/
// instead: `npm pack` / `npm publish` run `prepack` (publish: rewrite every ./src/X.ts target to
// ./dist/X.d.ts for "types" and ./dist/X.js otherwise) and `postpack` (restore: put the file back).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const MANIFEST = new URL('../package.json', import.meta.url);
const SAVED = new URL('../package.json.in-repo', import.meta.url);

function toDist(target, condition) {
  const match = /^\.\/src\/(.+)\.ts$/.exec(target);
  if (!match) return target;
  return condition === 'types' ? `./dist/${match[1]}.d.ts` : `./dist/${match[1]}.js`;
}

function rewrite(exportsField) {
  return Object.fromEntries(
    Object.entries(exportsField).map(([subpath, value]) => [
      subpath,
      typeof value === 'string'
        ? toDist(value, 'default')
        : Object.fromEntries(Object.entries(value).map(([condition, target]) => [condition, toDist(target, condition)])),
    ]),
  );
}

const command = process.argv[2];
if (command === 'publish') {
  if (existsSync(SAVED)) throw new Error('package.json.in-repo exists: a previous pack did not finish; run `node scripts/pack-manifest.mjs restore` first');
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  writeFileSync(SAVED, text);
  manifest.exports = rewrite(manifest.exports);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
} else if (command === 'restore') {
  if (existsSync(SAVED)) renameSync(SAVED, MANIFEST);
} else {
  throw new Error('usage: pack-manifest.mjs publish|restore');
}
