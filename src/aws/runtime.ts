// One Lambda execution environment's Anteroom: the same core as any node (src/compose/core.ts), over the AWS store (Redis + DynamoDB), with keys in Secrets Manager and events to
// EventBridge. Built once per execution environment, on the first invocation, and reused while it is warm.

import { DynamoDBClient, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { composeCore } from '../compose/core.ts';
import type { Clock } from '../domain/clock.ts';
import { ROOM_CHECK_INTERVAL_MS } from '../domain/room-sync.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { EventBus } from '../events/bus.ts';
import { EventBridgeSink } from '../events/eventbridge-sink.ts';
import { CompositeStore } from '../store/dynamodb/composite-store.ts';
import { TokenTable } from '../store/dynamodb/token-table.ts';
import type { Store } from '../domain/ports/store.ts';
import { RedisStore } from '../store/redis/redis-store.ts';
import type { PurgeHook } from '../cdn/purge-hook.ts';
import type { AwsConfig } from './environment.ts';
import type { IntakeQueue } from './intake-queue.ts';
import { readRedisPassword, SecretsManagerKeyStore } from './secrets-key-store.ts';

export interface AwsRuntime {
  config: AwsConfig;
  store: Store;
  room: WaitingRoom;
  bus: EventBus;
  clock: Clock;
  /** Waits until every event emitted so far has been delivered (call before a handler returns). */
  flush(): Promise<void>;
  /**
   * Brings the rooms served in line with the store (rooms API changes) if the last look is a second old or more:
   * every handler calls it first, so a warm execution environment follows changes within about a second and
   * costs at most one read of the rooms version a second. Never fails: when the store cannot be read, the rooms
   * known so far are served (and the invocation meets the store's trouble itself).
   */
  followRooms(): Promise<void>;
  close(): Promise<void>;
}

export interface RuntimeParts {
  store: Store;
  /** Where events go; none = nowhere. */
  events?: EventBridgeSink | undefined;
  /** Asynchronous intake of joins (the public API and the OpenID function); none = joins are numbered at once. */
  intake?: IntakeQueue | undefined;
  /** Called after a reset is durable: the CDN purge (the private API's CloudFront invalidation). */
  afterReset?: PurgeHook | undefined;
  clock?: Clock;
  log?: (message: string, detail?: unknown) => void;
}

export async function createRuntime(config: AwsConfig, parts: RuntimeParts): Promise<AwsRuntime> {
  const log = parts.log ?? ((message, detail) => console.error(message, detail ?? ''));
  const intake = parts.intake;
  // The stack's room (EVENT_ID) is written to the store at every cold start — the environment wins for it, as
  // the events file does for a node's rooms — and every stored room is served (the rooms API's too).
  // The room as every function of the core stack writes it: an OpenID stack's client settings (event.oidc, from
  // its own secrets) stay in its function (src/aws/oidc.ts lays them over the room it serves). Written to the
  // store, they would be dropped again by the next cold start of any core function — and the OpenID function,
  // following the store, would stop being a client within a second; its client secret would sit in Redis too.
  const { oidc: _ownClient, ...room } = config.event;
  const keepHistorySeconds = (config.historyRetentionDays ?? 30) * 86_400;
  const core = await composeCore({
    store: parts.store,
    recordWaits: keepHistorySeconds > 0,
    rooms: [room],
    onRoomRefused: (eventId, problem) => log(`stored room "${eventId}" refused by the room-settings schema; skipped: ${problem}`),
    clock: parts.clock,
    // The stacks always set ISSUER (VWR's PublicTokenIssuer); this is only a last resort.
    defaultIssuer: () => config.event.issuer ?? 'urn:anteroom:aws',
    ...(intake
      ? {
          intake: (eventId, joins) =>
            intake.send(joins.map((j) => ({ event_id: eventId, request_id: j.requestId, entry_time: j.entryTime, authorization: j.authorization }))),
        }
      : {}),
    ...(parts.afterReset ? { afterReset: parts.afterReset } : {}),
  });
  // (A failed cold start is tried again by the next invocation (once()); composeCore closes what it opened, or
  // its Redis client would go on reconnecting — with a wrong AUTH token, for ever — beside the next attempt's.)
  const { bus } = core;
  if (parts.events) bus.subscribe(parts.events);
  bus.onSinkError = (sink, error) => log(`event sink ${sink.name} failed`, error);
  let lastRoomCheck = core.clock();
  return {
    config,
    store: parts.store,
    room: core.room,
    bus,
    clock: core.clock,
    flush: async () => {
      // The waits of the visitors this invocation admitted go to the room's histograms before it returns (an
      // execution environment may be frozen, then dropped, at any time after). Nothing tallied: no store call.
      const waits = core.room.reports.flushWaits(keepHistorySeconds).catch((error: unknown) => log('wait histogram flush failed', error));
      await Promise.all([parts.events?.flush(), waits]);
    },
    followRooms: async () => {
      const now = core.clock();
      if (now - lastRoomCheck < ROOM_CHECK_INTERVAL_MS) return;
      lastRoomCheck = now;
      try {
        await core.room.rooms.syncRooms();
      } catch (error) {
        log('cannot follow the rooms of the store; serving the rooms known so far', error);
      }
    },
    close: () => core.close(),
  };
}

/** The production parts, from the configuration: Redis with AUTH from Secrets Manager, DynamoDB, EventBridge. */
export async function openAwsParts(config: AwsConfig, intake?: IntakeQueue): Promise<RuntimeParts> {
  const secrets = new SecretsManagerClient({});
  const password = config.redis.authSecretId ? await readRedisPassword(secrets, config.redis.authSecretId) : undefined;
  const url = new URL(`${config.redis.tls ? 'rediss' : 'redis'}://${config.redis.host}:${config.redis.port}`);
  if (password) url.password = password;
  const redis = new RedisStore({
    url: url.toString(),
    keyPrefix: config.redis.keyPrefix,
    // A cold start in a VPC includes the TLS handshake: allow it more than a warm call needs.
    readyTimeoutMs: 3000,
    connectTimeoutMs: 3000,
  });
  const keys = config.signingKeysSecretPrefix
    ? new SecretsManagerKeyStore({ client: secrets, prefix: config.signingKeysSecretPrefix })
    : undefined;
  let store: Store = redis;
  if (config.tokenTableName) {
    const dynamo = new DynamoDBClient({});
    const tableName = config.tokenTableName;
    store = new CompositeStore({
      redis,
      tokens: new TokenTable({ client: dynamo, tableName }),
      keys,
      pingTokens: async () => {
        await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
      },
    });
  }
  const events = config.eventBusName
    ? new EventBridgeSink({ client: new EventBridgeClient({}), eventBusName: config.eventBusName })
    : undefined;
  return { store, events, intake };
}
