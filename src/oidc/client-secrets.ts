// Client secrets of the OpenID Connect clients, kept in the store so every node agrees on the secret in
// effect and a rotation takes effect everywhere at once (no node caches a secret).
//
// The store holds, per client, `{"secret": s, "basis": b}` where b is the SHA-256 of the configured secret
// the record was made under (null when the configuration names none). The secret in effect is:
//   - the stored one, while the configuration still names the same secret (or none) as when it was stored —
//     so a rotation through the private API outlives restarts;
//   - otherwise the configured one (the operator changed the file: the file wins), or a newly generated one
//     (the file no longer names a secret).
// Generated secrets are 50 alphanumerics from the CSPRNG (≈ 297 bits). Secrets are never logged.

import { createHash, randomBytes } from 'node:crypto';
import { secretsEqual } from '../http/auth/constant-time.ts';
import type { SecretStore } from '../domain/ports/store.ts';
import type { OidcClient } from './clients.ts';

export const CLIENT_SECRET_LENGTH = 50;
const ALPHANUMERICS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 50 characters drawn uniformly from [A-Za-z0-9] (rejection sampling: no modulo bias). */
export function generateClientSecret(): string {
  const limit = 256 - (256 % ALPHANUMERICS.length);
  let secret = '';
  while (secret.length < CLIENT_SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < limit && secret.length < CLIENT_SECRET_LENGTH) secret += ALPHANUMERICS[byte % ALPHANUMERICS.length];
    }
  }
  return secret;
}

interface StoredSecret {
  secret: string;
  basis: string | null;
}

const storeName = (clientId: string) => `oidc-client-secret:${clientId}`;
const basisOf = (client: OidcClient) =>
  client.configuredSecret === undefined ? null : createHash('sha256').update(client.configuredSecret).digest('hex');

function decode(raw: string): StoredSecret {
  const value = JSON.parse(raw) as Partial<StoredSecret>;
  if (typeof value.secret !== 'string') throw new Error('malformed OIDC client secret record in the store');
  return { secret: value.secret, basis: typeof value.basis === 'string' ? value.basis : null };
}

export class ClientSecrets {
  private readonly store: SecretStore;

  constructor(store: SecretStore) {
    this.store = store;
  }

  /** The secret in effect for the client. */
  async current(client: OidcClient): Promise<string> {
    return (await this.resolve(client)).stored.secret;
  }

  /** Replaces the secret in effect by a newly generated one; the old one stops working at once. */
  async rotate(client: OidcClient): Promise<string> {
    const { raw } = await this.resolve(client);
    const next: StoredSecret = { secret: generateClientSecret(), basis: basisOf(client) };
    // Compare-and-set: two operators rotating at once both get the one winner back.
    const stored = await this.store.replaceSecret(storeName(client.clientId), raw, JSON.stringify(next));
    return decode(stored ?? raw).secret;
  }

  /** The stored record in effect (stored first if there was none), as text and decoded. */
  private async resolve(client: OidcClient): Promise<{ raw: string; stored: StoredSecret }> {
    const name = storeName(client.clientId);
    const basis = basisOf(client);
    const wanted = () => JSON.stringify({ secret: client.configuredSecret ?? generateClientSecret(), basis });
    const raw = await this.store.claimSecret(name, wanted());
    const stored = decode(raw);
    if (stored.basis === basis) return { raw, stored };
    // The configuration changed since the record was stored: replace it, unless another node just did.
    const replaced = (await this.store.replaceSecret(name, raw, wanted())) ?? raw;
    return { raw: replaced, stored: decode(replaced) };
  }

  /** Constant-time comparison with the secret in effect. */
  async verify(client: OidcClient, given: string): Promise<boolean> {
    return secretsEqual(given, await this.current(client));
  }
}
