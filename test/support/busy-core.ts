// Keeps one CPU core busy: a tight loop of SHA-256 hashing, never waiting. For running the suite on a machine
// with one core taken by something else (see test/support/soak.ts and docs/testing.md, "The suite under load").
//
//   node test/support/busy-core.ts [--seconds S]
//
// Stops after S seconds (default 3 hours, a guard so that a forgotten one does not run for ever), on SIGTERM
// or SIGINT. Prints the number of hashes done when it stops, to show it really worked.

import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: String(3 * 3600) } } });
const seconds = Number(values.seconds);
if (!(seconds > 0)) {
  console.error('usage: node test/support/busy-core.ts [--seconds S]');
  process.exit(2);
}

const until = Date.now() + seconds * 1000;
let hashes = 0;
let stop = false;
const finish = () => {
  console.log(`busy-core: ${hashes.toLocaleString('en-US')} hashes`);
  process.exit(0);
};
process.on('SIGTERM', () => (stop = true));
process.on('SIGINT', () => (stop = true));

// Slices of about 50 ms of pure CPU, with a turn of the event loop between them only to see a signal.
const block = Buffer.alloc(4096, 1);
function slice(): void {
  const end = Date.now() + 50;
  while (Date.now() < end) {
    for (let i = 0; i < 100; i++) createHash('sha256').update(block).digest();
    hashes += 100;
  }
  if (stop || Date.now() >= until) finish();
  else setImmediate(slice);
}
slice();
