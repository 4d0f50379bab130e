// Lambda function behind the public REST API (through CloudFront): every public route of the contract.
// assign_queue_num answers once the join is on the SQS intake queue; src/aws/intake-consumer.ts numbers it.

import { ConfigErrors } from '../domain/errors.ts';
import { proxyHandler, publicHttpApp } from './api-gateway.ts';
import { awsConfigFromEnv } from './environment.ts';
import { sqsIntakeQueue } from './intake-queue.ts';
import { createRuntime, openAwsParts } from './runtime.ts';
import { once } from './once.ts';

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  if (!config.intakeQueueUrl) throw ConfigErrors.awsEnvironment('environment variable INTAKE_QUEUE_URL is required');
  return createRuntime(config, await openAwsParts(config, sqsIntakeQueue(config.intakeQueueUrl)));
});

export const handler = proxyHandler(runtime, publicHttpApp);
