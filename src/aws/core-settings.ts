// The core stack's settings document, as a function of another stack reads it (the OpenID stack's).
//
// The core stack publishes, in its CoreSettings secret, the environment its own functions run with
// (CORE_SETTING_NAMES: the event settings, Redis, the token table, the event bus, the signing keys). A function
// of a stack built on it reads that document at cold start and runs over the same waiting room, with the
// settings the core runs with *now*: a core stack update (say a new ValidityPeriod) reaches it on its next cold
// start, and no CloudFormation export pins those values (an imported export cannot change while imported).
//
// Only the names in CORE_SETTING_NAMES are taken from the document; everything else stays the function's own.
// The function's own EVENT_ID (the stack parameter) must be the core's: a mismatch is a deployment mistake
// and is refused by name rather than served against another event.

import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigErrors } from '../domain/errors.ts';
import { CORE_SETTING_NAMES } from './environment.ts';

type Env = Record<string, string | undefined>;

/** The variables of the document, checked: a JSON object with every CORE_SETTING_NAMES variable as a string. */
export function parseCoreSettings(text: string, secretId: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw ConfigErrors.awsEnvironment(`secret ${secretId} must hold the core stack's settings as a JSON object`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw ConfigErrors.awsEnvironment(`secret ${secretId} must hold the core stack's settings as a JSON object`);
  }
  const settings: Record<string, string> = {};
  // Not a setting of the core's functions: the URL of its private API, for checking a PrivateAPIEndpoint.
  const privateApi = (parsed as Record<string, unknown>)[PRIVATE_API_URL];
  if (typeof privateApi === 'string') settings[PRIVATE_API_URL] = privateApi;
  // Every name, always: a missing one would silently fall back to a default (keys or tokens in Redis, no
  // AUTH, no events) and run beside the core over other data.
  for (const name of CORE_SETTING_NAMES) {
    const value = (parsed as Record<string, unknown>)[name];
    if (value === undefined) throw ConfigErrors.awsEnvironment(`secret ${secretId} names no ${name}: is it a core stack's CoreSettings secret?`);
    if (typeof value !== 'string') throw ConfigErrors.awsEnvironment(`secret ${secretId}: ${name} must be a string`);
    settings[name] = value;
  }
  return settings;
}

/** The key of the core's private API URL in the document (the core's PrivateApiInvokeURL output). */
export const PRIVATE_API_URL = 'PRIVATE_API_URL';

/** A URL as compared: the host in lower case, no trailing slashes. */
const comparable = (url: string) => {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host.toLowerCase()}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url;
  }
};

/**
 * The function's environment with the core's settings in effect; EVENT_ID must agree, and so must
 * PRIVATE_API_ENDPOINT (VWR's PrivateAPIEndpoint parameter), when given, with the core's private API URL.
 */
export function withCoreSettings(env: Env, core: Record<string, string>): Env {
  const own = env.EVENT_ID ?? '';
  if (own !== core.EVENT_ID) {
    throw ConfigErrors.awsEnvironment(`this stack's EventID "${own}" is not the event of its core stack ("${core.EVENT_ID}")`);
  }
  const named = env.PRIVATE_API_ENDPOINT;
  const actual = core[PRIVATE_API_URL];
  if (named && actual !== undefined && comparable(named) !== comparable(actual)) {
    throw ConfigErrors.awsEnvironment(`this stack's PrivateAPIEndpoint "${named}" is not the private API of the core stack of EventID "${own}" ("${actual}")`);
  }
  return { ...env, ...core };
}

/** Reads CORE_SETTINGS_SECRET_ARN and answers the environment to build the function's configuration from. */
export async function readCoreSettings(client: Pick<SecretsManagerClient, 'send'>, env: Env = process.env): Promise<Env> {
  const secretId = env.CORE_SETTINGS_SECRET_ARN;
  if (!secretId) throw ConfigErrors.awsEnvironment('environment variable CORE_SETTINGS_SECRET_ARN is required');
  const reply = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  return withCoreSettings(env, parseCoreSettings(reply.SecretString ?? '', secretId));
}
