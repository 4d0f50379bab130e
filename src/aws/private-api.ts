// Lambda function behind the private REST API. API Gateway authenticates every call with IAM (the caller
// signs with SigV4, as VWR's control panel and inlet strategies do); the function serves the private routes
// of the contract, and after a reset invalidates the public CloudFront distribution. No SigV4 verification
// happens here: see privateHttpApp.

import { privateHttpApp, proxyHandler } from './api-gateway.ts';
import { sqsPurgeHook } from './cloudfront-purge.ts';
import { awsConfigFromEnv, type AwsConfig } from './environment.ts';
import { createRuntime, openAwsParts, type RuntimeParts } from './runtime.ts';
import { once } from './once.ts';
import type { SdkClient } from './runtime-sdk.ts';

/** The private API's parts: reset_initial_state has the public CloudFront distribution invalidated. */
export function withCdnPurge(config: AwsConfig, parts: RuntimeParts, sqs?: SdkClient): RuntimeParts {
  const queueUrl = config.cdnPurgeQueueUrl;
  return queueUrl ? { ...parts, afterReset: sqsPurgeHook(queueUrl, sqs ? { client: sqs } : {}) } : parts;
}

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, withCdnPurge(config, await openAwsParts(config)));
});

export const handler = proxyHandler(runtime, privateHttpApp);
