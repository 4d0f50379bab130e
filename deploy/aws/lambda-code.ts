// Where the stacks take their Lambda code from. Never from a bucket the deploying account does not own: S3
// names are global, and whoever owns a bucket named in a template could ship code that is deployed with
// CAPABILITY_IAM.
//
// - 'bucket' (default; `npm run synth` and the tests): Code.fromBucket in the bucket named by the template's
//   `SourceBucket` parameter, key `<SourceKeyPrefix>/<name>.zip` — the deployer's own bucket, in the stack's
//   Region, where they uploaded the zips (`npm run build:lambda`, zipped; docs/aws.md). `npm run synth --
//   --bucket <name> --key-prefix <prefix>` writes templates whose parameters default to those, so a parameter
//   file written for VWR's templates deploys them unchanged. The templates contain no asset hashes and are
//   byte-for-byte reproducible, so they can be committed.
// - 'asset' (`cdk deploy --context code=asset`): Code.fromAsset on those directories; the CDK uploads them to
//   the account's own bootstrap bucket. Requires `npm run build:lambda` first.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CfnParameter, Fn, type Stack } from 'aws-cdk-lib';
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
  /** 'bucket': the default of the SourceBucket parameter (none: the deployer must give it). */
  bucket?: string;
  /** 'bucket': the default of the SourceKeyPrefix parameter. */
  keyPrefix?: string;
}

export const DEFAULT_KEY_PREFIX = 'anteroom';
export const DEFAULT_CODE_SOURCE: CodeSource = { mode: 'bucket' };

/** S3 bucket naming rules (general purpose buckets): 3-63 lower-case letters, digits, dots and hyphens. */
export const BUCKET_NAME_PATTERN = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';

const distDir = join(dirname(fileURLToPath(import.meta.url)), 'dist');

export interface SourceParameters {
  bucket: CfnParameter;
  keyPrefix: CfnParameter;
}

const parameters = new WeakMap<Stack, SourceParameters>();
const buckets = new WeakMap<Stack, IBucket>();

/** The stack's SourceBucket and SourceKeyPrefix parameters (one pair per stack): where the zips live. */
export function sourceParameters(stack: Stack, source: CodeSource): SourceParameters {
  let found = parameters.get(stack);
  if (!found) {
    found = {
      bucket: new CfnParameter(stack, 'SourceBucket', {
        type: 'String',
        description: 'Your S3 bucket, in this stack\'s Region, holding the Lambda zips (and the nested templates) of this release: see docs/aws.md, Deploying',
        allowedPattern: BUCKET_NAME_PATTERN,
        constraintDescription: 'An S3 bucket name.',
        ...(source.bucket ? { default: source.bucket } : {}),
      }),
      keyPrefix: new CfnParameter(stack, 'SourceKeyPrefix', {
        type: 'String',
        description: 'Key prefix of the zips and templates in SourceBucket (no leading or trailing slash)',
        allowedPattern: '^[A-Za-z0-9!_.*\'()-]+(/[A-Za-z0-9!_.*\'()-]+)*$',
        constraintDescription: 'S3 key segments separated by single slashes.',
        default: source.keyPrefix ?? DEFAULT_KEY_PREFIX,
      }),
    };
    parameters.set(stack, found);
  }
  return found;
}

/** The code of one bundle for a function of `stack`. */
export function lambdaCode(stack: Stack, bundle: string, source: CodeSource): Code {
  if (source.mode === 'asset') {
    const dir = join(distDir, bundle);
    if (!existsSync(join(dir, 'index.mjs'))) {
      throw new Error(`deploy/aws/dist/${bundle} is missing: run \`npm run build:lambda\` before synthesising with code=asset`);
    }
    return Code.fromAsset(dir);
  }
  const { bucket: bucketName, keyPrefix } = sourceParameters(stack, source);
  let bucket = buckets.get(stack);
  if (!bucket) {
    bucket = Bucket.fromBucketName(stack, 'CodeBucket', bucketName.valueAsString);
    buckets.set(stack, bucket);
  }
  return Code.fromBucket(bucket, Fn.join('/', [keyPrefix.valueAsString, `${bundle}.zip`]));
}
