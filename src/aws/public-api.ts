// Lambda function behind the public REST API (through CloudFront): every public route of the contract.
// assign_queue_num answers once the join is on the SQS intake queue; src/aws/intake-consumer.ts numbers it.

import { proxyHandler, publicHttpApp } from './api-gateway.ts';
import { awsConfigFromEnv } from './environment.ts';
import { intakeQueueOf } from './intake-queue.ts';
import { createRuntime, openAwsParts } from './runtime.ts';
import { once } from './once.ts';

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, await openAwsParts(config, intakeQueueOf(config)));
});

export const handler = proxyHandler(runtime, publicHttpApp);
