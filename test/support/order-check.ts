// Order check: runs each given test file several times, each time in another random order of its tests
// (node --test --test-random-seed=<seed>), one file and one run at a time, and lists every seed that failed with
// the command that replays it. A test that passes alone but fails after another one leans on what that other
// one left behind (a counter, a room, a stopped node, a scripted failure). See docs/testing.md.
//
//   node test/support/order-check.ts [--seeds N] [--first S] file.test.ts ...
//
// Seeds S … S+N−1 (default 1 … 5): fixed, so a run can be repeated; node:test prints the order each seed gives.
// Exits 1 when any run failed.

import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seeds: { type: 'string', default: '5' }, first: { type: 'string', default: '1' } },
});
const seeds = Number(values.seeds);
const first = Number(values.first);
if (positionals.length === 0 || !Number.isInteger(seeds) || seeds < 1 || !Number.isInteger(first)) {
  console.error('usage: node test/support/order-check.ts [--seeds N] [--first S] file.test.ts ...');
  process.exit(2);
}

const failed: string[] = [];
for (const file of positionals) {
  for (let seed = first; seed < first + seeds; seed++) {
    const args = ['--test', '--test-concurrency=1', `--test-random-seed=${seed}`, '--test-reporter=dot', file];
    const run = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const ok = run.status === 0;
    console.log(`${ok ? 'ok  ' : 'FAIL'} seed ${String(seed).padStart(3)}  ${file}`);
    if (!ok) {
      failed.push(`node --test --test-random-seed=${seed} --test-reporter=spec ${file}`);
      process.stdout.write(`${run.stdout}${run.stderr}`.split('\n').slice(-60).join('\n'));
    }
  }
}
if (failed.length > 0) {
  console.log(`\n${failed.length} run(s) failed; replay with:\n${failed.join('\n')}`);
  process.exit(1);
}
console.log(`\nevery file passed in ${seeds} orders`);
