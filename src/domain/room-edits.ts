// The rooms API's rules for the documents it takes and gives (docs/rooms.md, "Rooms API"). Pure functions:
// the service reads and writes the store around them.
//
// - A PATCH body is merged into the stored settings as a JSON merge patch (RFC 7396): objects key by key,
//   arrays and scalars replaced, null removes the key (its default applies again).
// - Secrets are write-only. An answer never holds a webhook's `secret`, the OpenID Connect `client_secret`
//   nor the bot defence's `enqueue_key_secret`; it says `secret_set` / `client_secret_set` /
//   `enqueue_key_secret_set` instead. A PUT or PATCH that leaves a secret out keeps the stored one: a
//   webhook's, when a stored webhook has the same URL; the client secret, when the body has an `oidc` section;
//   the enqueue key secret, when the body has a `bot_defence` section. To change a secret, send the new one.
// - The read-only fields of an answer (`phase`, `secret_set`, `client_secret_set`, `enqueue_key_secret_set`) are accepted and ignored
//   in a body, so that an answer can be edited and PUT back as it is.

import type { BotDefenceSettings, OidcClientSettings, RoomSettings, WebhookTarget } from './room-settings.ts';

/** A webhook as answered: its URL, and whether a secret is set (always, the schema requires one). */
export interface WebhookView {
  url: string;
  secret_set: boolean;
}

export interface OidcClientView extends Omit<OidcClientSettings, 'client_secret'> {
  client_secret_set: boolean;
}

export interface BotDefenceView extends Omit<BotDefenceSettings, 'enqueue_key_secret'> {
  enqueue_key_secret_set: boolean;
}

/** A room as the rooms API answers it: its settings without their secrets, plus the read-only phase. */
export type RoomView = Omit<RoomSettings, 'webhooks' | 'oidc' | 'bot_defence'> & {
  webhooks: WebhookView[];
  oidc?: OidcClientView;
  bot_defence?: BotDefenceView;
  phase: string;
};

type Json = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function roomView(settings: RoomSettings, phase: string): RoomView {
  const { event_id: eventId, webhooks, oidc, bot_defence: botDefence, ...rest } = settings;
  let botDefenceView: BotDefenceView | undefined;
  if (botDefence) {
    const { enqueue_key_secret: secret, ...defence } = botDefence;
    botDefenceView = { ...defence, enqueue_key_secret_set: secret !== undefined };
  }
  let oidcView: OidcClientView | undefined;
  if (oidc) {
    const { client_secret: secret, ...client } = oidc;
    oidcView = { ...client, client_secret_set: secret !== undefined };
  }
  return {
    event_id: eventId,
    ...rest,
    webhooks: webhooks.map((webhook) => ({ url: webhook.url, secret_set: webhook.secret !== '' })),
    ...(oidcView ? { oidc: oidcView } : {}),
    ...(botDefenceView ? { bot_defence: botDefenceView } : {}),
    phase,
  };
}

/** The body without the read-only fields an answer carries (a copy; the body is left as it is). */
export function withoutReadOnlyFields(body: Json): Json {
  const { phase: _phase, ...copy } = body;
  if (Array.isArray(copy.webhooks)) {
    copy.webhooks = copy.webhooks.map((webhook: unknown) => {
      if (!isJsonObject(webhook)) return webhook;
      const { secret_set: _set, ...rest } = webhook;
      return rest;
    });
  }
  if (isJsonObject(copy.oidc)) {
    const { client_secret_set: _set, ...rest } = copy.oidc;
    copy.oidc = rest;
  }
  if (isJsonObject(copy.bot_defence)) {
    const { enqueue_key_secret_set: _set, ...rest } = copy.bot_defence;
    copy.bot_defence = rest;
  }
  return copy;
}

/** RFC 7396: `patch` merged into `target` (neither is changed). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const merged: Json = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

/**
 * The input with the stored secrets it leaves out put back (see the rule at the top). `stored` is the room's
 * stored settings as JSON (or nothing for a new room); it is read defensively, having been stored as text.
 */
export function withStoredSecrets(input: Json, stored: unknown): Json {
  if (!isJsonObject(stored)) return input;
  const copy: Json = { ...input };
  if (Array.isArray(copy.webhooks) && Array.isArray(stored.webhooks)) {
    const storedSecrets = new Map<string, string>();
    for (const webhook of stored.webhooks as unknown[]) {
      if (isJsonObject(webhook) && typeof webhook.url === 'string' && typeof webhook.secret === 'string') {
        storedSecrets.set(webhook.url, webhook.secret);
      }
    }
    copy.webhooks = copy.webhooks.map((webhook: unknown) => {
      if (!isJsonObject(webhook) || 'secret' in webhook || typeof webhook.url !== 'string') return webhook;
      const secret = storedSecrets.get(webhook.url);
      return secret === undefined ? webhook : ({ ...webhook, secret } satisfies Partial<WebhookTarget>);
    });
  }
  if (isJsonObject(copy.oidc) && !('client_secret' in copy.oidc) && isJsonObject(stored.oidc)) {
    const secret = stored.oidc.client_secret;
    if (typeof secret === 'string') copy.oidc = { ...copy.oidc, client_secret: secret };
  }
  if (isJsonObject(copy.bot_defence) && !('enqueue_key_secret' in copy.bot_defence) && isJsonObject(stored.bot_defence)) {
    const secret = stored.bot_defence.enqueue_key_secret;
    if (typeof secret === 'string') copy.bot_defence = { ...copy.bot_defence, enqueue_key_secret: secret };
  }
  return copy;
}
