// `npm run mutate [scope ...]`: StrykerJS over the core rules, one scope (folder) after the other, then one
// line per scope with its mutation score. Scopes and their test files: test/mutation/scopes.json.
// Nightly-sized (tens of minutes on two cores): not part of `npm test`. See docs/testing.md.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const SCOPES = JSON.parse(readFileSync(new URL('./scopes.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const CONFIG = fileURLToPath(new URL('./stryker.config.mjs', import.meta.url));

interface Report {
  files: Record<string, { mutants: { status: string }[] }>;
}

/** Killed (a test failed) and Timeout (the tests hung) count as detected; CompileError and Ignored are not mutants. */
function score(report: Report): { detected: number; survived: number; total: number } {
  let detected = 0;
  let survived = 0;
  for (const file of Object.values(report.files)) {
    for (const { status } of file.mutants) {
      if (status === 'Killed' || status === 'Timeout') detected++;
      else if (status === 'Survived' || status === 'NoCoverage') survived++;
    }
  }
  return { detected, survived, total: detected + survived };
}

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in SCOPES));
if (unknown.length > 0) {
  console.error(`unknown scope ${unknown.join(', ')}; scopes: ${Object.keys(SCOPES).join(', ')}`);
  process.exit(2);
}
const scopes = requested.length > 0 ? requested : Object.keys(SCOPES);
const lines: string[] = [];
let failed = false;
for (const scope of scopes) {
  const run = spawnSync('stryker', ['run', CONFIG], { stdio: 'inherit', env: { ...process.env, MUTATION_SCOPE: scope } });
  const file = `reports/mutation/${scope}.json`;
  if (run.status !== 0 || !existsSync(file)) {
    failed = true;
    lines.push(`${scope.padEnd(12)} stryker failed (exit ${run.status ?? run.signal})`);
    continue;
  }
  const { detected, survived, total } = score(JSON.parse(readFileSync(file, 'utf8')) as Report);
  const percent = total === 0 ? 100 : (100 * detected) / total;
  lines.push(`${scope.padEnd(12)} ${percent.toFixed(1).padStart(5)} %  ${detected}/${total} detected, ${survived} survived  (reports/mutation/${scope}.html)`);
}
console.log(`\nmutation score per scope\n${lines.join('\n')}`);
process.exit(failed ? 1 : 0);
