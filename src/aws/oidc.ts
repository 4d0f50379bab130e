// Lambda function behind the OpenID stack's REST API (deploy/aws/stacks/openid.ts, stage `oidc`, VWR's): the
// OpenID Connect adapter of src/oidc. API Gateway hands it the path inside the stage (/authorize); the
// function puts the stage back in front (/oidc/authorize), where the adapter serves. Its login page polls the core stack's public API through CloudFront
// (PUBLIC_API_URL = VWR's PublicAPIEndpoint parameter), whose one-second cache absorbs the polling, as VWR's
// login page did; this function serves only the OIDC paths.
//
// Joins: POST /oidc/join takes the public API's path on AWS: the join goes onto the core stack's SQS intake
// queue (INTAKE_QUEUE_URL, the queue assign_queue_num uses, through the same sqsIntakeQueue) and the core's
// intake consumer numbers it, so a flood of OpenID logins waits in the queue, not on Redis. The message carries
// the authorization request; the consumer binds it to the position it numbers. The join answers the request ID
// without a position, and the login page asks the core's public API (/queue_num) until the position exists.
//
// The waiting room is the core stack's: at cold start the function reads the core's settings document
// (CORE_SETTINGS_SECRET_ARN, src/aws/core-settings.ts) for the event settings, Redis, the token table, the
// event bus and the signing keys (Redis serves /continue, /token and /userInfo), and runs inside the core's VPC (the stack imports its subnets and security
// group). The OIDC client (client_id = the event ID) comes from the stack's own secrets: the redirect-URI
// allow-list (REDIRECT_URIS_SECRET_ID, JSON {"redirect_uris": [...]}) and the client secret (CLIENT_SECRET_ID,
// the secret string itself). A changed allow-list or core setting takes effect in new execution environments.
// The issuer is PUBLIC_URL (the API's host, https://<api>.execute-api.<region>.<suffix>) + /oidc.

import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigErrors } from '../domain/errors.ts';
import { Value } from '@sinclair/typebox/value';
import type { RoomRegistry } from '../domain/room-registry.ts';
import { OidcClientSchema, type OidcClientSettings, type RoomSettings } from '../domain/room-settings.ts';
import { OIDC_BASE_PATH, oidcAdapter } from '../oidc/adapter.ts';
import { proxyHandler, publicHttpApp, type HttpApp } from './api-gateway.ts';
import { readCoreSettings } from './core-settings.ts';
import { awsConfigFromEnv, type AwsConfig } from './environment.ts';
import { intakeQueueOf } from './intake-queue.ts';
import { createRuntime, openAwsParts, type AwsRuntime } from './runtime.ts';
import { once } from './once.ts';

type Env = Record<string, string | undefined>;

export interface OidcFunctionConfig {
  /** The URL the adapter's base path is under (the API's host); the issuer is this + /oidc. No trailing slash. */
  publicUrl: string;
  /** The core stack's public API (its CloudFront URL), which the login page polls. */
  publicApiUrl: string;
  /** Secret holding {"redirect_uris": [...]}. */
  redirectUrisSecretId: string;
  /** Secret holding the client secret; none = generated and kept in the store (src/oidc/client-secrets.ts). */
  clientSecretId?: string | undefined;
}

/** An absolute https URL without credentials, query or fragment, from the environment; no trailing slash. */
function baseUrl(env: Env, name: string): string {
  const text = env[name];
  if (!text) throw ConfigErrors.awsEnvironment(`environment variable ${name} is required`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw ConfigErrors.awsEnvironment(`${name} must be an absolute URL (got "${text}")`);
  }
  // Also an empty "?" or "#", which URL reports as no search or hash at all.
  if (url.protocol !== 'https:' || url.username || url.password || /[?#]/.test(text)) {
    throw ConfigErrors.awsEnvironment(`${name} must be an https URL without credentials, query or fragment (got "${text}")`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

export function oidcConfigFromEnv(env: Env = process.env): OidcFunctionConfig {
  const publicUrl = baseUrl(env, 'PUBLIC_URL');
  const publicApiUrl = baseUrl(env, 'PUBLIC_API_URL');
  const redirectUrisSecretId = env.REDIRECT_URIS_SECRET_ID;
  if (!redirectUrisSecretId) throw ConfigErrors.awsEnvironment('environment variable REDIRECT_URIS_SECRET_ID is required');
  return { publicUrl, publicApiUrl, redirectUrisSecretId, clientSecretId: env.CLIENT_SECRET_ID || undefined };
}

// The rules of the events file's "oidc" member (src/domain/room-settings.ts): a redirect URI is absolute
// http(s) with a host and no fragment; a client secret is 16-256 printable ASCII characters.
const REDIRECT_URIS = OidcClientSchema.properties.redirect_uris;
const CLIENT_SECRET = OidcClientSchema.properties.client_secret;

/** The OIDC client settings of the stack's event, from its secrets. */
export async function readOidcClientSettings(
  client: Pick<SecretsManagerClient, 'send'>,
  config: Pick<OidcFunctionConfig, 'redirectUrisSecretId' | 'clientSecretId'>,
): Promise<OidcClientSettings> {
  const read = async (id: string) => (await client.send(new GetSecretValueCommand({ SecretId: id }))).SecretString ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(await read(config.redirectUrisSecretId));
  } catch {
    throw ConfigErrors.awsEnvironment(`secret ${config.redirectUrisSecretId} must be JSON {"redirect_uris": [...]}`);
  }
  const uris = (parsed as { redirect_uris?: unknown } | null)?.redirect_uris;
  if (!Array.isArray(uris) || uris.length > REDIRECT_URIS.maxItems! || !uris.every((u) => Value.Check(REDIRECT_URIS.items, u))) {
    throw ConfigErrors.awsEnvironment(
      `secret ${config.redirectUrisSecretId}: redirect_uris must be a list of at most ${REDIRECT_URIS.maxItems} absolute http(s) URLs without fragment`,
    );
  }
  const settings: OidcClientSettings = { redirect_uris: [...(uris as string[])] };
  if (config.clientSecretId) {
    const secret = await read(config.clientSecretId);
    // Never echoed: the message names the secret, not its value.
    if (!Value.Check(CLIENT_SECRET, secret)) throw ConfigErrors.awsEnvironment(`secret ${config.clientSecretId} must be 16-256 printable ASCII characters`);
    settings.client_secret = secret;
  }
  return settings;
}

/** The stack's configuration with its event made an OIDC client (in this function only: roomsWithOwnClient). */
export function withOidcClient(config: AwsConfig, oidc: OidcClientSettings): AwsConfig {
  return { ...config, event: { ...config.event, oidc } };
}

/**
 * The rooms the runtime serves (the core's, from the store), the stack's own with this function's client
 * settings laid over it: they are never written to the store (src/aws/runtime.ts), which the core's functions
 * write the room to without them.
 */
export function roomsWithOwnClient(runtime: Pick<AwsRuntime, 'room' | 'config'>): Pick<RoomRegistry, 'get' | 'all'> {
  const { event_id: eventId, oidc } = runtime.config.event;
  // One object per version of the room, as the registry's own (OidcClients makes a client once per object).
  const laid = new WeakMap<RoomSettings, RoomSettings>();
  const withClient = (room: RoomSettings): RoomSettings => {
    if (room.event_id !== eventId || !oidc) return room;
    let copy = laid.get(room);
    if (!copy) laid.set(room, (copy = Object.freeze({ ...room, oidc })));
    return copy;
  };
  return {
    get: (id) => {
      const room = runtime.room.rooms.roomSettings(id);
      return room && withClient(room);
    },
    all: () => runtime.room.rooms.rooms().map(withClient),
  };
}

/**
 * The OpenID function's app: the OIDC adapter at /oidc, the stage the paths it is given are inside of. This
 * function serves no pages, so its login page has no proof-of-work solver (docs/bots.md).
 */
export async function oidcHttpApp(runtime: AwsRuntime, config: Pick<OidcFunctionConfig, 'publicUrl' | 'publicApiUrl'>): Promise<HttpApp> {
  const oidc = oidcAdapter({
    room: runtime.room,
    secrets: runtime.store,
    publicUrl: () => config.publicUrl,
    publicApiUrl: config.publicApiUrl,
    clock: runtime.clock,
    clientRooms: roomsWithOwnClient(runtime),
    solverUrl: false,
  });
  return { ...(await publicHttpApp(runtime, [oidc.routes])), pathPrefix: OIDC_BASE_PATH };
}

/** The handler over a runtime built by `runtime` (tests give local stand-ins; production, openAwsParts). */
export function createOidcHandler(
  runtime: () => Promise<AwsRuntime>,
  config: () => Pick<OidcFunctionConfig, 'publicUrl' | 'publicApiUrl'>,
): ReturnType<typeof proxyHandler> {
  return proxyHandler(runtime, (rt) => oidcHttpApp(rt, config()));
}

/** The function's configuration at cold start: the core's settings and the stack's OIDC client. */
export async function oidcAwsConfig(secrets: Pick<SecretsManagerClient, 'send'>, env: Env = process.env): Promise<AwsConfig> {
  const oidc = oidcConfigFromEnv(env);
  const [coreEnv, settings] = await Promise.all([readCoreSettings(secrets, env), readOidcClientSettings(secrets, oidc)]);
  return withOidcClient(awsConfigFromEnv(coreEnv), settings);
}

const runtime = once(async () => {
  const config = await oidcAwsConfig(new SecretsManagerClient({}));
  // The core's intake queue, as the public API's function (see above).
  return createRuntime(config, await openAwsParts(config, intakeQueueOf(config)));
});

// The runtime has checked the environment by the time the app is built.
export const handler = createOidcHandler(runtime, () => oidcConfigFromEnv());
