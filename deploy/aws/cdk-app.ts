// Entry point for the CDK CLI (deploy/aws/cdk.json): `npx cdk deploy <stack> --context code=asset` after
// `npm run build:lambda`. Without the context the stacks reference the published zips (see lambda-code.ts).

import { App } from 'aws-cdk-lib';
import { DEFAULT_CODE_SOURCE } from './lambda-code.ts';
import { buildApp } from './templates.ts';

const context = new App().node;
const mode = context.tryGetContext('code') === 'asset' ? 'asset' : 'bucket';
const { app } = buildApp({ code: mode === 'asset' ? { mode } : DEFAULT_CODE_SOURCE });
app.synth();
