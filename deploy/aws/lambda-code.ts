// Where the stacks take their Lambda code from.
//
// - 'bucket' (default; `npm run synth` and the tests): Code.fromBucket in a distribution bucket named by the
//   template's SourceCode mapping — `<S3Bucket>-<region>` / `<KeyPrefix>/<name>.zip`, VWR's publishing
//   scheme. The templates then contain no asset hashes and are byte-for-byte reproducible, so they can be
//   committed and published; the zips are the directories `npm run build:lambda` writes, zipped.
// - 'asset' (`cdk deploy --context code=asset`): Code.fromAsset on those directories; the CDK uploads them to
//   its bootstrap bucket. Requires `npm run build:lambda` first.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aws, CfnMapping, Fn, type Stack } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { Bucket, type IBucket } from 'aws-cdk-lib/aws-s3';

export interface LambdaBundle {
  /** Directory under deploy/aws/dist and the zip's base name. */
  name: string;
  /** Source file, relative to the repository root. */
  entry: string;
  /** Needs the Redis store's Lua scripts beside it. */
  redis: boolean;
}

export const LAMBDA_BUNDLES: readonly LambdaBundle[] = [
  { name: 'public-api', entry: 'src/aws/public-api.ts', redis: true },
  { name: 'private-api', entry: 'src/aws/private-api.ts', redis: true },
  { name: 'intake-consumer', entry: 'src/aws/intake-consumer.ts', redis: true },
  { name: 'jobs', entry: 'src/aws/jobs.ts', redis: true },
  { name: 'authorizer', entry: 'src/aws/authorizer.ts', redis: false },
  { name: 'inlet', entry: 'src/aws/inlet.ts', redis: false },
  { name: 'oidc', entry: 'src/aws/oidc.ts', redis: true },
  { name: 'cdn-purge', entry: 'src/aws/cloudfront-purge.ts', redis: false },
];

export type CodeMode = 'bucket' | 'asset';

export interface CodeSource {
  mode: CodeMode;
  /** Distribution bucket (without the -<region> suffix) and key prefix, for 'bucket'. */
  bucket?: string;
  keyPrefix?: string;
}

export const DEFAULT_CODE_SOURCE: CodeSource = { mode: 'bucket', bucket: 'anteroom-dist', keyPrefix: 'anteroom/latest' };

const distDir = join(dirname(fileURLToPath(import.meta.url)), 'dist');

/** The code of one bundle for a function of `stack`. */
export function lambdaCode(stack: Stack, bundle: string, source: CodeSource): Code {
  if (source.mode === 'asset') {
    const dir = join(distDir, bundle);
    if (!existsSync(join(dir, 'index.mjs'))) {
      throw new Error(`deploy/aws/dist/${bundle} is missing: run \`npm run build:lambda\` before synthesising with code=asset`);
    }
    return Code.fromAsset(dir);
  }
  const mapping = sourceCodeMapping(stack, source);
  let bucket = buckets.get(stack);
  if (!bucket) {
    bucket = Bucket.fromBucketName(stack, 'CodeBucket', Fn.join('-', [mapping.findInMap('General', 'S3Bucket'), Aws.REGION]));
    buckets.set(stack, bucket);
  }
  return Code.fromBucket(bucket, Fn.join('/', [mapping.findInMap('General', 'KeyPrefix'), `${bundle}.zip`]));
}

const mappings = new WeakMap<Stack, CfnMapping>();
const buckets = new WeakMap<Stack, IBucket>();

/** The template's SourceCode mapping (one per stack): where the published zips live. */
export function sourceCodeMapping(stack: Stack, source: CodeSource): CfnMapping {
  let mapping = mappings.get(stack);
  if (!mapping) {
    mapping = new CfnMapping(stack, 'SourceCode', {
      mapping: { General: { S3Bucket: source.bucket ?? 'anteroom-dist', KeyPrefix: source.keyPrefix ?? 'anteroom/latest' } },
    });
    mappings.set(stack, mapping);
  }
  return mapping;
}
