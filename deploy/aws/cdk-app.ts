// Entry point for the CDK CLI (deploy/aws/cdk.json): `npx cdk deploy <stack> --context code=asset` after
// `npm run build:lambda`. Without the context the stacks reference the published zips (see lambda-code.ts).
// `--context redisNodeType=cache.t4g.small` picks a smaller ElastiCache node (docs/aws.md, cost notes).

import { App } from 'aws-cdk-lib';
import { DEFAULT_CODE_SOURCE } from './lambda-code.ts';
import { buildApp } from './templates.ts';

// A probe for the context only (the CLI passes it in CDK_CONTEXT_JSON). It must not synthesise: under the
// CLI every App synthesises itself on exit, and this empty one would overwrite the real app's manifest.
const context = new App({ autoSynth: false }).node;
const mode = context.tryGetContext('code') === 'asset' ? 'asset' : 'bucket';
const redisNodeType = context.tryGetContext('redisNodeType') as string | undefined;
const { app } = buildApp({ code: mode === 'asset' ? { mode } : DEFAULT_CODE_SOURCE, ...(redisNodeType ? { redisNodeType } : {}) });
app.synth();
