// Bundles the Lambda handlers of src/aws with esbuild: one directory per function under deploy/aws/dist
// (gitignored), each an ES module `index.mjs` plus the Redis store's Lua scripts it reads at start.
// @aws-sdk/* stays external: the Lambda Node.js runtime provides AWS SDK v3.
//
//   node deploy/aws/build-lambda.ts            (npm run build:lambda)
//
// The stacks reference these directories with Code.fromAsset when synthesised with `--context code=asset`
// (cdk deploy); see deploy/aws/lambda-code.ts.

import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { LAMBDA_BUNDLES } from './lambda-code.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dist = join(here, 'dist');

rmSync(dist, { recursive: true, force: true });
for (const bundle of LAMBDA_BUNDLES) {
  const outdir = join(dist, bundle.name);
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: [join(root, bundle.entry)],
    outfile: join(outdir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    sourcemap: 'linked',
    external: ['@aws-sdk/*'],
    // CommonJS dependencies (fastify, ioredis) call require() for Node built-ins.
    banner: { js: "import { createRequire as __anteroomRequire } from 'node:module'; const require = __anteroomRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  if (bundle.redis) cpSync(join(root, 'src/store/redis/lua'), join(outdir, 'lua'), { recursive: true });
  console.log(`deploy/aws/dist/${bundle.name}/index.mjs`);
}
