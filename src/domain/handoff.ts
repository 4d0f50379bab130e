// The hand-off without a gate (spec rooms.md §5): a served visitor of the waiting-room page is sent to the
// site at `return_to` with a one-time `anteroom_handoff` code, which the site's server exchanges with
// POST /handoff for the token set exactly once (a second use is 410).
//
// `return_to` must be on an origin the room lists in `allowed_return_origins`, compared as parsed origins
// (scheme, host, port): anything else is refused, so the page is never an open redirect.
//
// A code is `<payload>.<random>`: the payload names the request ID and when the code was made, the random
// part (192 bits) makes it unguessable. The store keeps it under the SHA-256 of the whole code, as a value
// shared by every node (SecretStore), and spends it with one compare-and-set: of two exchanges of one code
// exactly one wins.

import { createHash, randomBytes } from 'node:crypto';

/** The query parameter that carries the code to the site. */
export const HANDOFF_PARAMETER = 'anteroom_handoff';
/** Seconds a code can be exchanged after it was made (a redirect takes less than a second). */
export const HANDOFF_CODE_TTL_SEC = 120;
export const HANDOFF_UNUSED = 'unused';

export interface HandoffCode {
  code: string;
  /** Name of the code's entry in the store. */
  storeName: string;
}

/** The URL to send the visitor to, or undefined when `returnTo` is not on an allowed origin. */
export function allowedReturnUrl(returnTo: unknown, allowedOrigins: readonly string[] | undefined): URL | undefined {
  if (typeof returnTo !== 'string' || returnTo.length > 2048 || !allowedOrigins?.length) return undefined;
  let url: URL;
  try {
    url = new URL(returnTo);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  const allowed = allowedOrigins.some((origin) => {
    try {
      return new URL(origin).origin === url.origin;
    } catch {
      return false;
    }
  });
  return allowed ? url : undefined;
}

export function newHandoffCode(eventId: string, requestId: string, nowSec: number): HandoffCode {
  const payload = Buffer.from(JSON.stringify([requestId, nowSec])).toString('base64url');
  const code = `${payload}.${randomBytes(24).toString('base64url')}`;
  return { code, storeName: handoffStoreName(eventId, code) };
}

export function handoffStoreName(eventId: string, code: string): string {
  return `handoff:${eventId}:${createHash('sha256').update(code).digest('base64url')}`;
}

/** The request ID and creation time a code names, or undefined for a malformed code. */
export function readHandoffCode(code: unknown): { requestId: string; createdSec: number } | undefined {
  if (typeof code !== 'string' || code.length > 512) return undefined;
  const dot = code.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const [requestId, createdSec] = JSON.parse(Buffer.from(code.slice(0, dot), 'base64url').toString()) as unknown[];
    if (typeof requestId !== 'string' || typeof createdSec !== 'number') return undefined;
    return { requestId, createdSec };
  } catch {
    return undefined;
  }
}

/** The return URL with the code added as `anteroom_handoff`. */
export function handoffLocation(returnTo: URL, code: string): string {
  const url = new URL(returnTo);
  url.searchParams.set(HANDOFF_PARAMETER, code);
  return url.href;
}
