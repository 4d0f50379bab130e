// The configuration of the Lambda functions, read from their environment. The CDK stacks in deploy/aws set
// exactly these variables, from the stack parameters of VWR's templates (EventId, ValidityPeriod, ...).

import { ConfigErrors } from '../domain/errors.ts';
import { parseRoomSettings, RoomSettingsSchema, type RoomSettings } from '../domain/room-settings.ts';
import { integerRange } from '../domain/setting-problems.ts';

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
  /** SQS queue of joins (the public API and the OpenID function). */
  intakeQueueUrl?: string | undefined;
  /** Queue of the CDN purge function: a reset asks it to invalidate CloudFront (private API only). */
  cdnPurgeQueueUrl?: string | undefined;
  /** max-age of the polling endpoints (0–5 s), as on any Anteroom node. */
  pollTtl: number;
  logLevel: string;
  /** How long each room's per-minute history is kept (days; 0 records none). Default 30. */
  historyRetentionDays?: number;
}

type Env = Record<string, string | undefined>;

/**
 * What the functions accept for a period in seconds (both periods of a room share the room-settings schema's
 * range) and for a port; the stacks' parameters import them to say the same.
 */
export const SECONDS_RANGE = integerRange(RoomSettingsSchema.properties.validity_period);
export const PORT_RANGE = { min: 1, max: 65_535 } as const;

/** The variable that sets each of the room's settings (VWR's names). */
const ROOM_SETTING_VARIABLES = {
  event_id: 'EVENT_ID',
  validity_period: 'VALIDITY_PERIOD',
  enable_queue_position_expiry: 'ENABLE_QUEUE_POSITION_EXPIRY',
  queue_position_expiry_period: 'QUEUE_POSITION_EXPIRY_PERIOD',
  incr_serving_on_expiry: 'INCR_SVC_ON_QUEUE_POSITION_EXPIRY',
  enable_events_generation: 'ENABLE_EVENTS_GENERATION',
  issuer: 'ISSUER',
} as const;

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
  const value = wholeNumber(text);
  if (typeof value !== 'number' || value < min || value > max) {
    throw ConfigErrors.awsEnvironment(`${name} must be a whole number from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = trueOrFalse(text);
  if (typeof value === 'boolean') return value;
  throw ConfigErrors.awsEnvironment(`${name} must be "true" or "false" (got "${text}")`);
}

const optional = (env: Env, name: string) => (env[name] === '' ? undefined : env[name]);

/**
 * The stack's room, from its variables through the room-settings schema: a variable left unset or empty
 * takes the schema's default. Text is turned into the JSON value it spells ("3600", "true") and the schema
 * judges it; text that spells none is handed over as it is, for the schema to refuse with its rule.
 */
function roomFromEnv(env: Env): RoomSettings {
  required(env, 'EVENT_ID');
  const input: Record<string, unknown> = {};
  for (const [setting, name] of Object.entries(ROOM_SETTING_VARIABLES)) {
    const text = optional(env, name);
    if (text === undefined) continue;
    const kind = RoomSettingsSchema.properties[setting as keyof typeof ROOM_SETTING_VARIABLES].type;
    input[setting] = kind === 'integer' ? wholeNumber(text) : kind === 'boolean' ? trueOrFalse(text) : text;
  }
  const room = parseRoomSettings(input);
  if (room.ok) return room.settings;
  const name = ROOM_SETTING_VARIABLES[room.problem.path[0] as keyof typeof ROOM_SETTING_VARIABLES];
  throw ConfigErrors.awsEnvironment(`${name} ${room.problem.rule} (got "${env[name]}")`);
}

function wholeNumber(text: string): unknown {
  const value = Number(text);
  return Number.isInteger(value) ? value : text;
}

function trueOrFalse(text: string): unknown {
  return text === 'true' ? true : text === 'false' ? false : text;
}

export function awsConfigFromEnv(env: Env = process.env): AwsConfig {
  return {
    event: roomFromEnv(env),
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
    historyRetentionDays: integer(env, 'HISTORY_RETENTION_DAYS', 30, 0, 3650),
  };
}
