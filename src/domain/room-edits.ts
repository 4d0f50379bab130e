// The rooms API's rules for the documents it takes and gives (docs/rooms.md, "Rooms API"). Pure functions:
// the service reads and writes the store around them.
//
// - A PATCH body is merged into the stored settings as a JSON merge patch (RFC 7396): objects key by key,
//   arrays and scalars replaced, null removes the key (its default applies again).
// - Secrets are write-only (secret-settings.ts, driven by the schema's Secret mark): an answer shows each
//   secret's value as "[redacted]" — webhooks' `secret`, the OpenID Connect `client_secret`, the bot defence's
//   `enqueue_key_secret`, the gate's `bypass.headers` values. A PUT or PATCH that sends "[redacted]" back, or
//   leaves a secret property out of a section it has, keeps the stored value; to change a secret, send the new one.
// - The read-only fields of an answer (`phase`, and the `secret_set`, `client_secret_set`, `enqueue_key_secret_set`
//   of earlier versions' answers) are accepted and ignored in a body, so that an answer can be edited and PUT
//   back as it is.

import type { RoomSettings } from './room-settings.ts';
import { RoomSettingsSchema } from './room-settings.ts';
import { redactSecrets, restoreSecrets, type Restored } from './secret-settings.ts';

/** A room as the rooms API answers it: its settings with their secrets redacted, plus the read-only phase. */
export type RoomView = RoomSettings & { phase: string };

type Json = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function roomView(settings: RoomSettings, phase: string): RoomView {
  return { ...redactSecrets(RoomSettingsSchema, settings), phase };
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
 * The input with the stored secrets it refers to put back (see the rule at the top). `stored` is the room's
 * stored settings as JSON (or nothing for a new room); it is read defensively, having been stored as text.
 */
export function withStoredSecrets(input: Json, stored: unknown): Restored {
  return restoreSecrets(RoomSettingsSchema, input, stored);
}
