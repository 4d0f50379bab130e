// The OpenID Connect clients: one per event configured with an `oidc` section. client_id = event_id = the
// `aud` of its tokens. An event without that section is no client: /authorize and /token refuse it.

import type { RoomRegistry } from '../domain/room-registry.ts';
import type { RoomSettings } from '../domain/room-settings.ts';

export interface OidcClient {
  /** The event ID. */
  clientId: string;
  /** Compared exactly, character for character (no prefix, pattern or normalisation). */
  redirectUris: readonly string[];
  /** From the configuration file; when absent the secret is generated (see client-secrets.ts). */
  configuredSecret?: string | undefined;
  /** The room's signing_algorithm: the algorithm of its id tokens. */
  signingAlgorithm: RoomSettings['signing_algorithm'];
}

/**
 * The clients, read live from the rooms (no copy): a room put with an `oidc` section is a client from then on,
 * a room removed or put without one is no longer.
 */
export class OidcClients {
  private readonly rooms: Pick<RoomRegistry, 'get' | 'all'>;
  /** Each room's client, made once per settings object (the registry holds each version read-only). */
  private readonly made = new WeakMap<RoomSettings, OidcClient | null>();

  constructor(rooms: Pick<RoomRegistry, 'get' | 'all'>) {
    this.rooms = rooms;
  }

  get(clientId: unknown): OidcClient | undefined {
    const room = this.rooms.get(clientId);
    return room ? this.clientOf(room) : undefined;
  }

  all(): OidcClient[] {
    return this.rooms.all().flatMap((room) => this.clientOf(room) ?? []);
  }

  private clientOf(room: RoomSettings): OidcClient | undefined {
    let client = this.made.get(room);
    if (client === undefined) {
      client = clientOf(room) ?? null;
      this.made.set(room, client);
    }
    return client ?? undefined;
  }
}

function clientOf(event: RoomSettings): OidcClient | undefined {
  if (!event.oidc) return undefined;
  return {
    clientId: event.event_id,
    redirectUris: Object.freeze([...event.oidc.redirect_uris]),
    configuredSecret: event.oidc.client_secret,
    signingAlgorithm: event.signing_algorithm,
  };
}
