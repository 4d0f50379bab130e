// Asynchronous intake of joins on AWS (VWR's design): the public API answers assign_queue_num once the join
// is on an SQS queue; src/aws/intake-consumer.ts numbers the joins in batches. One message per join. The
// OpenID function's join takes the same queue (intakeQueueOf), its message carrying the authorization request
// the consumer binds to the position it numbers.

import { ConfigErrors } from '../domain/errors.ts';
import type { AwsConfig } from './environment.ts';
import { runtimeSdk, type SdkClient } from './runtime-sdk.ts';

export interface IntakeMessage {
  event_id: string;
  request_id: string;
  /** Epoch seconds of the join (the position's entry_time). */
  entry_time: number;
  /** An OpenID join's authorization request (opaque text), bound to the position once numbered. */
  authorization?: string | undefined;
}

export interface IntakeQueue {
  send(messages: readonly IntakeMessage[]): Promise<void>;
}

export function encodeIntakeMessage(message: IntakeMessage): string {
  const { event_id, request_id, entry_time, authorization } = message;
  return JSON.stringify(authorization === undefined ? { event_id, request_id, entry_time } : { event_id, request_id, entry_time, authorization });
}

/** The message, or null when the body is not one (a message nobody should have sent). */
export function decodeIntakeMessage(body: string): IntakeMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { event_id, request_id, entry_time, authorization } = value as Record<string, unknown>;
  if (typeof event_id !== 'string' || typeof request_id !== 'string') return null;
  if (typeof entry_time !== 'number' || !Number.isSafeInteger(entry_time)) return null;
  if (authorization !== undefined && typeof authorization !== 'string') return null;
  return authorization === undefined ? { event_id, request_id, entry_time } : { event_id, request_id, entry_time, authorization };
}

/** The stack's intake queue (INTAKE_QUEUE_URL), which every function that joins visitors sends to. */
export function intakeQueueOf(config: Pick<AwsConfig, 'intakeQueueUrl'>): IntakeQueue {
  if (!config.intakeQueueUrl) throw ConfigErrors.awsEnvironment('environment variable INTAKE_QUEUE_URL is required');
  return sqsIntakeQueue(config.intakeQueueUrl);
}

/** SendMessageBatch takes at most 10 messages. */
const SQS_BATCH = 10;

interface SqsModule {
  SQSClient: new (config: object) => SdkClient;
  SendMessageBatchCommand: new (input: object) => unknown;
}

/** The SQS queue, through the runtime's @aws-sdk/client-sqs (src/aws/runtime-sdk.ts). */
export function sqsIntakeQueue(queueUrl: string, client?: SdkClient): IntakeQueue {
  const load = runtimeSdk<SqsModule>('@aws-sdk/client-sqs', (module) => new module.SQSClient({}), client);
  return {
    async send(messages) {
      const { module, client: sqs } = await load();
      for (let i = 0; i < messages.length; i += SQS_BATCH) {
        let entries = messages.slice(i, i + SQS_BATCH).map((m, j) => ({ Id: String(j), MessageBody: encodeIntakeMessage(m) }));
        // Entries SQS refused are sent once more; a second refusal fails the joins (the visitor retries).
        for (let attempt = 1; entries.length > 0; attempt++) {
          const reply = (await sqs.send(new module.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }))) as {
            Failed?: { Id: string; Message?: string }[];
          };
          const failed = new Set((reply.Failed ?? []).map((f) => f.Id));
          if (failed.size > 0 && attempt >= 2) throw new Error(`SQS refused ${failed.size} join(s): ${reply.Failed?.[0]?.Message ?? ''}`);
          entries = entries.filter((e) => failed.has(e.Id));
        }
      }
    },
  };
}
