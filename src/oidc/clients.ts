// The OpenID Connect clients: one per event configured with an `oidc` section. client_id = event_id = the
// `aud` of its tokens. An event without that section is no client: /authorize and /token refuse it.

import type { RoomSettings } from '../domain/room-settings.ts';

export interface OidcClient {
  /** The event ID. */
  clientId: string;
  /** Compared exactly, character for character (no prefix, pattern or normalisation). */
  redirectUris: readonly string[];
  /** From the configuration file; when absent the secret is generated (see client-secrets.ts). */
  configuredSecret?: string | undefined;
}

export class OidcClients {
  private readonly byId = new Map<string, OidcClient>();

  constructor(catalog: { all(): RoomSettings[] }) {
    for (const event of catalog.all()) {
      const client = clientOf(event);
      if (client) this.byId.set(client.clientId, client);
    }
  }

  get(clientId: unknown): OidcClient | undefined {
    return typeof clientId === 'string' ? this.byId.get(clientId) : undefined;
  }

  all(): OidcClient[] {
    return [...this.byId.values()];
  }
}

function clientOf(event: RoomSettings): OidcClient | undefined {
  if (!event.oidc) return undefined;
  return {
    clientId: event.event_id,
    redirectUris: Object.freeze([...event.oidc.redirect_uris]),
    configuredSecret: event.oidc.client_secret,
  };
}
