// Lambda function behind the private REST API. API Gateway authenticates every call with IAM (the caller
// signs with SigV4, as VWR's control panel and inlet strategies do); the function serves the private routes
// of the contract. No SigV4 verification happens here: see privateHttpApp.

import { privateHttpApp, proxyHandler } from './api-gateway.ts';
import { awsConfigFromEnv } from './environment.ts';
import { createRuntime, once, openAwsParts } from './runtime.ts';

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, await openAwsParts(config));
});

export const handler = proxyHandler(runtime, privateHttpApp);
