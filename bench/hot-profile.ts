// CPU profiles of the hot paths (issue 37): one Anteroom node pinned to CPU 1 run with `--cpu-prof`, one load on
// it (wrk on CPU 0), then the node stopped and the top frames of its profile printed (bench/profile-top.ts).
//
//   node bench/hot-profile.ts <what> [sqlite|redis] [<out dir>]
//     what: serving_num | queue_num | claims (new ES256 sets) | reclaims (the same sets again)
//   PROFILE_SECONDS (default 8), PROFILE_VISITORS (default 20,000)

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startChildNode } from '../test/support/child-node.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { joinAndServe } from './join-and-serve.ts';
import { topFrames } from './profile-top.ts';
import { runWrk } from './wrk-load.ts';
import { runLoad } from './load-runner.ts';

const what = process.argv[2] ?? 'queue_num';
const store = process.argv[3] ?? 'sqlite';
const out = resolve(process.argv[4] ?? mkdtempSync(join(tmpdir(), 'anteroom-prof-')));
mkdirSync(out, { recursive: true });
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const VISITORS = Number(process.env.PROFILE_VISITORS ?? 20_000);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'anteroom-hot-profile-'));
const profileFile = join(out, `${what}-${store}-${Date.now()}.cpuprofile`);
const redis = store === 'redis' ? await startRedisServer({ appendonly: true, appendfsync: 'everysec' }) : undefined;
try {
  const config = join(dir, 'rooms.json');
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Sample', signing_algorithm: 'ES256' }] }));
  const node = await startChildNode(
    [...(redis ? ['--store', redis.url] : ['--data-dir', join(dir, 'data')]), '--config', config, '--admin-token', ADMIN_TOKEN],
    { NODE_OPTIONS: `--import ${new URL('./profile-on-signal.ts', import.meta.url).pathname}`, PROFILE_OUT: profileFile },
    { cpu: 1 },
  );
  try {
    const ids = await joinAndServe(node, 'Sample', VISITORS, ADMIN_TOKEN);
    const file = join(dir, 'lines.txt');
    if (what === 'queue_num') writeFileSync(file, ids.map((id) => `/queue_num?event_id=Sample&request_id=${id}`).join('\n'));
    else writeFileSync(file, ids.join('\n'));
    const spec =
      what === 'serving_num'
        ? { url: `${node.url}/serving_num?event_id=Sample` }
        : what === 'queue_num'
          ? { url: node.url, pathsFile: file }
          : { url: `${node.url}/generate_token`, method: 'POST' as const, claimIdsFile: file, eventId: 'Sample' };
    // Every visitor's first claim: before the profile for re-claims, the profiled load itself for new sets.
    const firstClaims = () => runLoad({ ...spec, connections: 100, amount: ids.length }, 0);
    if (what === 'reclaims') await firstClaims();
    if (what === 'queue_num') await runWrk({ ...spec, connections: 100, durationSec: 3 }, 0); // every position found once
    node.process.kill('SIGUSR2');
    await new Promise((done) => setTimeout(done, 200));
    const r = what === 'claims' ? await firstClaims() : await runWrk({ ...spec, connections: 100, durationSec: SECONDS }, 0);
    node.process.kill('SIGUSR2');
    for (let i = 0; i < 100 && !existsSync(profileFile); i++) await new Promise((done) => setTimeout(done, 100));
    console.log(`${what} on ${store}: ${Math.round(r.rps)} req/s, ${r.total} answers, ${r.non2xx} not 2xx`);
  } finally {
    node.process.kill('SIGTERM');
    await node.exited;
  }
  const file = profileFile;
  console.log(`profile: ${file}`);
  const { frames, samples } = topFrames(JSON.parse(readFileSync(file, 'utf8')));
  const pct = (n: number) => `${((n / samples) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${samples} samples; by self time:`);
  for (const f of [...frames].sort((a, b) => b.self - a.self).slice(0, 30)) console.log(`  ${pct(f.self)}  ${f.name}`);
} finally {
  await redis?.destroy();
  rmSync(dir, { recursive: true, force: true });
}
