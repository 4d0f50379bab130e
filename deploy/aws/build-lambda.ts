// Bundles the Lambda handlers of src/aws with esbuild: one directory per function under deploy/aws/dist
// (gitignored), each an ES module `index.mjs` plus the Redis store's Lua scripts it reads at start.
// @aws-sdk/* stays external: the Lambda Node.js runtime provides AWS SDK v3.
//
//   node deploy/aws/build-lambda.ts                  (npm run build:lambda)
//   node deploy/aws/build-lambda.ts --source-maps    also writes index.mjs.map next to each bundle
//
// No source maps by default: loading a bundle with --enable-source-maps costs cold start on every new
// execution environment for stack traces that are rarely read (measured: bench/lambda-cold-start.ts,
// docs/benchmarks.md). With --source-maps the map is linked, and a function uses it once NODE_OPTIONS
// contains --enable-source-maps (set it on one function while debugging).
//
// The stacks reference these directories with Code.fromAsset when synthesised with `--context code=asset`
// (cdk deploy); see deploy/aws/lambda-code.ts.

import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { LAMBDA_BUNDLES, type LambdaBundle } from './lambda-code.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

/** Builds one bundle into `outdir` (index.mjs, lua/ when it needs Redis). */
export async function buildBundle(bundle: LambdaBundle, outdir: string, options: { sourceMaps: boolean }): Promise<void> {
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: [join(root, bundle.entry)],
    outfile: join(outdir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    sourcemap: options.sourceMaps ? 'linked' : false,
    external: ['@aws-sdk/*'],
    // CommonJS dependencies (fastify, ioredis) call require() for Node built-ins.
    banner: { js: "import { createRequire as __anteroomRequire } from 'node:module'; const require = __anteroomRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  if (bundle.redis) cpSync(join(root, 'src/store/redis/lua'), join(outdir, 'lua'), { recursive: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { 'source-maps': { type: 'boolean', default: false } } });
  const dist = join(here, 'dist');
  rmSync(dist, { recursive: true, force: true });
  for (const bundle of LAMBDA_BUNDLES) {
    await buildBundle(bundle, join(dist, bundle.name), { sourceMaps: values['source-maps'] === true });
    console.log(`deploy/aws/dist/${bundle.name}/index.mjs`);
  }
}
