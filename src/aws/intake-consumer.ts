// Lambda function consuming the SQS intake queue: numbers the joins of a batch in one store operation per
// event, binds the authorization requests OpenID joins carry to their new positions, and reports the messages it could not number (SQS partial batch response), which SQS delivers
// again and finally moves to the dead-letter queue.
//
// Idempotent per request ID: SQS delivers at least once (a redelivered batch, a message whose visibility
// timed out while it was being numbered), and a request ID that already has a position keeps it
// (assignPositionsIfAbsent). VWR numbered a redelivered message again, giving one visitor two positions.

import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isRequestId, normaliseRequestId } from '../domain/ids.ts';
import type { JoinRequest } from '../domain/ports/store.ts';
import { awsConfigFromEnv } from './environment.ts';
import { decodeIntakeMessage } from './intake-queue.ts';
import { createRuntime, openAwsParts, type AwsRuntime } from './runtime.ts';
import { once } from './once.ts';

export interface IntakeOutcome {
  numbered: number;
  failed: number;
}

export function createIntakeConsumer(
  runtime: () => Promise<AwsRuntime>,
  log: (message: string, detail?: unknown) => void = (message, detail) => console.error(message, detail ?? ''),
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const failures: string[] = [];
    // Until the runtime is up nothing can be numbered: every message is tried again.
    let rt: AwsRuntime;
    try {
      rt = await runtime();
    } catch (error) {
      log('intake: Anteroom could not start', error);
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    }
    await rt.followRooms();
    const byEvent = new Map<string, { records: SQSRecord[]; joins: JoinRequest[] }>();
    for (const record of event.Records) {
      const message = decodeIntakeMessage(record.body);
      // A message that is not a join of a configured event cannot succeed later either; reported as a failure
      // it ends in the dead-letter queue, where an operator sees it.
      if (!message || !isRequestId(message.request_id) || !rt.room.rooms.roomSettings(message.event_id)) {
        log('intake: message is not a join of a configured event', { messageId: record.messageId });
        failures.push(record.messageId);
        continue;
      }
      let group = byEvent.get(message.event_id);
      if (!group) byEvent.set(message.event_id, (group = { records: [], joins: [] }));
      group.records.push(record);
      group.joins.push({ requestId: normaliseRequestId(message.request_id), entryTime: message.entry_time, authorization: message.authorization });
    }
    for (const [eventId, group] of byEvent) {
      try {
        await rt.room.queue.numberIntakeJoins(eventId, group.joins);
      } catch (error) {
        log(`intake: numbering ${group.joins.length} join(s) of ${eventId} failed`, error);
        failures.push(...group.records.map((r) => r.messageId));
      }
    }
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, await openAwsParts(config));
});

export const handler = createIntakeConsumer(runtime);
