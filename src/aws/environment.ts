// The configuration of the Lambda functions, read from their environment. The CDK stacks in deploy/aws set
// exactly these variables, from the stack parameters of VWR's templates (EventId, ValidityPeriod, ...).

import { ConfigErrors } from '../domain/errors.ts';
import { defaultSettings, EVENT_ID_PATTERN, type RoomSettings } from '../domain/room-settings.ts';

export interface AwsConfig {
  /** One waiting room per stack, as VWR deployed it. */
  event: RoomSettings;
  redis: {
    host: string;
    port: number;
    /** ElastiCache in transit encryption (rediss://). Default true. */
    tls: boolean;
    /** Secret holding the ElastiCache AUTH token ({"password": ...}); none = no AUTH. */
    authSecretId?: string | undefined;
    keyPrefix?: string | undefined;
  };
  /** DynamoDB table of token records; none = token records in Redis too. */
  tokenTableName?: string | undefined;
  /** EventBridge bus for the events; none = no event delivery. */
  eventBusName?: string | undefined;
  /** Secrets Manager name prefix of the signing keys; none = keys in Redis. */
  signingKeysSecretPrefix?: string | undefined;
  /** SQS queue of joins (public API only). */
  intakeQueueUrl?: string | undefined;
  /** Queue of the CDN purge function: a reset asks it to invalidate CloudFront (private API only). */
  cdnPurgeQueueUrl?: string | undefined;
  /** max-age of the polling endpoints (0–5 s), as on any Anteroom node. */
  pollTtl: number;
  logLevel: string;
}

type Env = Record<string, string | undefined>;

/** What the functions accept for a period in seconds and for a port (the stacks' parameters say the same). */
export const SECONDS_RANGE = { min: 1, max: 31_536_000 } as const;
export const PORT_RANGE = { min: 1, max: 65_535 } as const;

/**
 * The variables that make a function part of one core stack's waiting room: its event settings and where
 * its store, keys and events are. The core stack sets them on its own functions and also publishes them as
 * one JSON document (its CoreSettings secret), which stacks built on it (the OpenID stack) read at cold
 * start instead of importing each value (src/aws/core-settings.ts).
 */
export const CORE_SETTING_NAMES = [
  'EVENT_ID',
  'VALIDITY_PERIOD',
  'ENABLE_EVENTS_GENERATION',
  'ENABLE_QUEUE_POSITION_EXPIRY',
  'QUEUE_POSITION_EXPIRY_PERIOD',
  'INCR_SVC_ON_QUEUE_POSITION_EXPIRY',
  'ISSUER',
  'REDIS_HOST',
  'REDIS_PORT',
  'REDIS_TLS',
  'REDIS_AUTH_SECRET_ARN',
  'TOKEN_TABLE_NAME',
  'EVENT_BUS_NAME',
  'SIGNING_KEYS_SECRET_PREFIX',
] as const;

export type CoreSettingName = (typeof CORE_SETTING_NAMES)[number];

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw ConfigErrors.awsEnvironment(`environment variable ${name} is required`);
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw ConfigErrors.awsEnvironment(`${name} must be a whole number from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (text === 'true' || text === 'false') return text === 'true';
  throw ConfigErrors.awsEnvironment(`${name} must be "true" or "false" (got "${text}")`);
}

const optional = (env: Env, name: string) => (env[name] === '' ? undefined : env[name]);

export function awsConfigFromEnv(env: Env = process.env): AwsConfig {
  const eventId = required(env, 'EVENT_ID');
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) throw ConfigErrors.awsEnvironment(`EVENT_ID "${eventId}" is not a valid event ID`);
  const defaults = defaultSettings(eventId);
  const issuer = optional(env, 'ISSUER');
  const event: RoomSettings = {
    ...defaults,
    validity_period: integer(env, 'VALIDITY_PERIOD', defaults.validity_period, SECONDS_RANGE.min, SECONDS_RANGE.max),
    enable_queue_position_expiry: flag(env, 'ENABLE_QUEUE_POSITION_EXPIRY', defaults.enable_queue_position_expiry),
    queue_position_expiry_period: integer(env, 'QUEUE_POSITION_EXPIRY_PERIOD', defaults.queue_position_expiry_period, SECONDS_RANGE.min, SECONDS_RANGE.max),
    incr_serving_on_expiry: flag(env, 'INCR_SVC_ON_QUEUE_POSITION_EXPIRY', defaults.incr_serving_on_expiry),
    enable_events_generation: flag(env, 'ENABLE_EVENTS_GENERATION', defaults.enable_events_generation),
    ...(issuer ? { issuer } : {}),
  };
  return {
    event,
    redis: {
      host: required(env, 'REDIS_HOST'),
      port: integer(env, 'REDIS_PORT', 6379, PORT_RANGE.min, PORT_RANGE.max),
      tls: flag(env, 'REDIS_TLS', true),
      authSecretId: optional(env, 'REDIS_AUTH_SECRET_ARN'),
      keyPrefix: optional(env, 'REDIS_KEY_PREFIX'),
    },
    tokenTableName: optional(env, 'TOKEN_TABLE_NAME'),
    eventBusName: optional(env, 'EVENT_BUS_NAME'),
    signingKeysSecretPrefix: optional(env, 'SIGNING_KEYS_SECRET_PREFIX'),
    intakeQueueUrl: optional(env, 'INTAKE_QUEUE_URL'),
    cdnPurgeQueueUrl: optional(env, 'CDN_PURGE_QUEUE_URL'),
    pollTtl: integer(env, 'POLL_TTL', 1, 0, 5),
    logLevel: optional(env, 'LOG_LEVEL') ?? 'warn',
  };
}
