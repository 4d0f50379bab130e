// The import time of the Lambda bundles (the part of a cold start the bundle decides), with and without
// source maps: each bundle built twice (no map; linked map), each imported in a fresh Node process, the three
// variants interleaved round by round so a noisy machine slows them alike. Prints medians and ratios.
//
//   node bench/lambda-cold-start.ts [rounds=15]
//
// Variants: "no map" (what npm run build:lambda ships), "map, not enabled" (a linked map but no
// --enable-source-maps: the map is never read), "map + --enable-source-maps" (the old default).

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildBundle } from '../deploy/aws/build-lambda.ts';
import { LAMBDA_BUNDLES } from '../deploy/aws/lambda-code.ts';
import { median } from './proc-stats.ts';

const ROUNDS = Number(process.argv[2] ?? 15);
const MEASURED = (process.env.BUNDLES ?? 'public-api,oidc,jobs,authorizer').split(',');
// Inside the repository (deploy/aws/dist is gitignored), so the bundles find @aws-sdk/* in node_modules as
// they find it in the Lambda runtime.
const distDir = fileURLToPath(new URL('../deploy/aws/dist/', import.meta.url));
mkdirSync(distDir, { recursive: true });
const dir = mkdtempSync(join(distDir, 'bench-'));

/**
 * CPU milliseconds (user + system) the import of the bundle takes in a fresh process, node's own start
 * excluded: on a shared machine steadier than wall time, and on Lambda a cold start is CPU-bound.
 */
function importMs(file: string, flags: string[]): number {
  const script = `const c = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(file).href)}); const d = process.cpuUsage(c); console.log((d.user + d.system) / 1000);`;
  return Number(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }).trim());
}

try {
  for (const name of MEASURED) {
    const bundle = LAMBDA_BUNDLES.find((b) => b.name === name)!;
    await buildBundle(bundle, join(dir, 'plain', name), { sourceMaps: false });
    await buildBundle(bundle, join(dir, 'mapped', name), { sourceMaps: true });
  }
  console.log(`lambda bundle import, CPU ms, median of ${ROUNDS} fresh processes each (Node ${process.version})`);
  for (const name of MEASURED) {
    const plain = join(dir, 'plain', name, 'index.mjs');
    const mapped = join(dir, 'mapped', name, 'index.mjs');
    const runs: Record<'plain' | 'mapOff' | 'mapOn', number[]> = { plain: [], mapOff: [], mapOn: [] };
    for (let i = 0; i < ROUNDS; i++) {
      runs.plain.push(importMs(plain, []));
      runs.mapOff.push(importMs(mapped, []));
      runs.mapOn.push(importMs(mapped, ['--enable-source-maps']));
    }
    const [p, off, on] = [median(runs.plain), median(runs.mapOff), median(runs.mapOn)];
    const kb = (f: string) => Math.round(statSync(f).size / 1024);
    console.log(
      `${name.padEnd(12)} bundle ${kb(plain)} KB, map ${kb(`${mapped}.map`)} KB | no map ${p.toFixed(1)} ms | map, not enabled ${off.toFixed(1)} ms | ` +
        `map + --enable-source-maps ${on.toFixed(1)} ms (${(on / p).toFixed(2)}x no map)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
