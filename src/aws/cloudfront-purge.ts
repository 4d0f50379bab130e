// After reset_initial_state the core stack's CloudFront distribution is invalidated, so the edge stops
// serving answers from before the reset: the spec's "a configured CDN purge hook is called", on AWS (VWR
// invalidated its distribution too). Without it CloudFront could keep answering a /queue_num position from
// before the reset for up to 60 s (VWR #214).
//
// The private API function runs in the VPC, which has no route to CloudFront's API (there is no VPC endpoint
// for it, and no NAT gateway by design), so the work is split in two over SQS, which the VPC reaches already:
// - the private API's purge hook puts {event_id} on the purge queue (sqsPurgeHook); the reset is already
//   durable by then, so a failure is logged, never turned into a failed reset;
// - the purge function, outside the VPC, takes it off the queue and calls CreateInvalidation
//   (createCdnPurgeHandler), once per batch; a failed invalidation is retried by SQS while it can still help.

import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { STATE_PATHS, type PurgeHook } from '../cdn/purge-hook.ts';
import { EVENT_ID_PATTERN } from '../domain/room-settings.ts';
import { runtimeSdk, type SdkClient } from './runtime-sdk.ts';

/** Viewer paths to invalidate: what a reset changes, with any query string (the cache key holds event_id, request_id). */
export const INVALIDATION_PATHS = STATE_PATHS.map((path) => `${path}*`);

type Log = (message: string, detail?: unknown) => void;
const consoleLog: Log = (message, detail) => console.error(message, detail ?? '');

type SqsModule = { SQSClient: new (config: object) => SdkClient; SendMessageCommand: new (input: object) => unknown };
type CloudFrontModule = {
  CloudFrontClient: new (config: object) => SdkClient;
  CreateInvalidationCommand: new (input: object) => unknown;
};

/** The private API's purge hook: asks the purge function, through its queue, to invalidate after a reset. */
export function sqsPurgeHook(queueUrl: string, options: { client?: SdkClient; log?: Log } = {}): PurgeHook {
  const load = runtimeSdk<SqsModule>('@aws-sdk/client-sqs', (m) => new m.SQSClient({}), options.client);
  const log = options.log ?? consoleLog;
  return async (eventId) => {
    try {
      const { module, client } = await load();
      await client.send(new module.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ event_id: eventId }) }));
    } catch (error) {
      log(`CDN purge after the reset of ${eventId} could not be requested; cached answers expire by their max-age`, (error as Error).message);
    }
  };
}

/**
 * The purge function: one CreateInvalidation of INVALIDATION_PATHS per batch of purge requests, whatever
 * their number — every reset changes the same paths, and CloudFront lets only a few wildcard invalidations
 * run at once. If it fails, the whole batch is reported failed and SQS delivers it again (the queue keeps a
 * request no longer than a cached answer from before the reset can live).
 */
export function createCdnPurgeHandler(deps: { distributionId: string; client?: SdkClient; log?: Log }): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const load = runtimeSdk<CloudFrontModule>('@aws-sdk/client-cloudfront', (m) => new m.CloudFrontClient({}), deps.client);
  const log = deps.log ?? consoleLog;
  return async (event) => {
    const requests: { messageId: string; eventId: string }[] = [];
    for (const record of event.Records) {
      const eventId = purgeRequestEventId(record.body);
      // Nothing to retry: a message nobody should have sent.
      if (eventId === null) log(`purge request ${record.messageId} ignored: not {"event_id": …}`);
      else requests.push({ messageId: record.messageId, eventId });
    }
    if (requests.length === 0) return { batchItemFailures: [] };
    const events = [...new Set(requests.map((r) => r.eventId))].join(', ');
    try {
      const { module, client } = await load();
      await client.send(
        new module.CreateInvalidationCommand({
          DistributionId: deps.distributionId,
          InvalidationBatch: {
            // Unique per request: CloudFront treats a repeated reference as the same invalidation.
            CallerReference: `anteroom-reset-${randomUUID()}`,
            Paths: { Quantity: INVALIDATION_PATHS.length, Items: INVALIDATION_PATHS },
          },
        }),
      );
      log(`CloudFront invalidation requested after the reset of ${events}`);
      return { batchItemFailures: [] };
    } catch (error) {
      log(`CloudFront invalidation after the reset of ${events} failed; SQS will deliver it again`, (error as Error).message);
      return { batchItemFailures: requests.map((r) => ({ itemIdentifier: r.messageId })) };
    }
  };
}

const EVENT_ID = new RegExp(EVENT_ID_PATTERN);

function purgeRequestEventId(body: string): string | null {
  try {
    const value = JSON.parse(body) as { event_id?: unknown };
    return typeof value?.event_id === 'string' && EVENT_ID.test(value.event_id) ? value.event_id : null;
  } catch {
    return null;
  }
}

let purge: ((event: SQSEvent) => Promise<SQSBatchResponse>) | undefined;
/** The purge function's entry point (DISTRIBUTION_ID from the stack). */
export const handler = (event: SQSEvent): Promise<SQSBatchResponse> => {
  const distributionId = process.env.DISTRIBUTION_ID;
  if (!distributionId) throw new Error('DISTRIBUTION_ID is not set');
  return (purge ??= createCdnPurgeHandler({ distributionId }))(event);
};
