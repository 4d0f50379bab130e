// Signing keys in AWS Secrets Manager (VWR kept its keys there too): one secret per event, named
// `<prefix><event ID>`, holding the event's keys as JSON. CreateSecret fails when the name exists, which makes
// it a natural "store unless one exists": of several cold-starting functions that each generated a key, one
// creates the secret and every other reads the winner. The private JWK is read by the functions' role only
// (IAM: secretsmanager:CreateSecret and GetSecretValue on `<prefix>*`), never returned by any API.

import {
  CreateSecretCommand,
  GetSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SigningKeyStore } from '../domain/ports/store.ts';
import type { StoredSigningKey } from '../domain/ports/store.ts';

export interface SecretsKeyStoreOptions {
  client: Pick<SecretsManagerClient, 'send'>;
  /** e.g. "my-stack/anteroom/signing-keys/" */
  prefix: string;
}

export class SecretsManagerKeyStore implements SigningKeyStore {
  private readonly client: Pick<SecretsManagerClient, 'send'>;
  private readonly prefix: string;

  constructor(options: SecretsKeyStoreOptions) {
    this.client = options.client;
    this.prefix = options.prefix;
  }

  secretName(eventId: string): string {
    return `${this.prefix}${eventId}`;
  }

  async getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    try {
      const reply = await this.client.send(new GetSecretValueCommand({ SecretId: this.secretName(eventId) }));
      return parseKeys(reply.SecretString);
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return [];
      throw error;
    }
  }

  async addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    try {
      await this.client.send(
        new CreateSecretCommand({
          Name: this.secretName(eventId),
          Description: `Anteroom signing keys of event ${eventId} (RS256, private JWK)`,
          SecretString: JSON.stringify([key]),
        }),
      );
      return key;
    } catch (error) {
      if (!(error instanceof ResourceExistsException)) throw error;
    }
    const keys = await this.getSigningKeys(eventId);
    const winner = keys[keys.length - 1];
    if (!winner) throw new Error(`signing key secret ${this.secretName(eventId)} exists but holds no key`);
    return winner;
  }
}

function parseKeys(text: string | undefined): StoredSigningKey[] {
  if (!text) return [];
  const keys = JSON.parse(text) as StoredSigningKey[];
  return keys.sort((a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

/** Reads the ElastiCache AUTH token: a secret holding {"password": "..."} (or the bare token). */
export async function readRedisPassword(client: Pick<SecretsManagerClient, 'send'>, secretId: string): Promise<string> {
  const reply = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  const text = reply.SecretString ?? '';
  try {
    const parsed = JSON.parse(text) as { password?: unknown };
    if (typeof parsed.password === 'string') return parsed.password;
  } catch {
    // not JSON: the secret is the token itself
  }
  return text;
}
