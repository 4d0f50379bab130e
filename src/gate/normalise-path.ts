// The one form of a request's path the gate decides on and sends on (docs/gate.md#paths-and-headers-the-gate-trusts).
// Route choice, bypass, the session check, the URL first asked for and the path the origin receives all use
// what normaliseTarget returns, so no spelling of a path can be matched as one thing and served as another:
//   - percent-encoded unreserved characters are decoded (%73 → s, %2E → .), other escapes kept, hex upper-cased;
//   - dot segments are removed (RFC 3986 §5.2.4) after that decoding, so /%2e/shop and /./shop are /shop;
//   - empty segments are merged (//ws → /ws), as most servers read them;
//   - characters a URL parser would escape (space, ", <, >, `, {, }, ^, bytes ≥ 0x80) are escaped here already.
// Refused (the caller answers 400): a target that is not a path (absolute form, *), an encoded / or \ (%2F,
// %5C), a raw \, control characters (raw or encoded), a #, malformed escapes, escapes that are not UTF-8, a
// double-encoded dot, / or \ (%252e: an origin decoding twice would read ..), and a `.`/`..` segment carrying
// `;` parameters (/..;/ — servlet containers read it as ..).
// The query is kept as sent (a control character, or a character beyond one byte, is refused).

export type NormalisedTarget = { ok: true; path: string; query: string; target: string } | { ok: false; reason: string };

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const HEX = /^[0-9A-Fa-f]{2}$/;
/** What WHATWG URL parsing would escape in a path (so `new URL` leaves the normalised path as it is). */
const ESCAPED = new Set([' ', '"', '<', '>', '`', '{', '}', '^']);
/** Paths that are already normal (the common case): nothing to decode, no empty or dot segment. */
const ALREADY_NORMAL = /^(?!.*\/\/)(?!.*\/\.\.?(?:\/|;|$))[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
/** An escaped % followed by the hex of ., / or \. */
const DOUBLE_ENCODED = /%25(?:2e|2f|5c)/i;
/** A longer target is refused (Node's own limit on the request head is 16 KiB). */
const MAX_TARGET = 8192;

/** The request target (path and query, as received) in its one normalised form, or why it is refused. */
export function normaliseTarget(target: string): NormalisedTarget {
  if (target.length > MAX_TARGET) return refuse('The path is too long');
  if (!target.startsWith('/')) return refuse('The request target must be a path');
  if (target.includes('#')) return refuse('The request target must not contain #');
  const q = target.indexOf('?');
  const rawPath = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q);
  for (let i = 0; i < query.length; i++) {
    const code = query.charCodeAt(i);
    if (isControl(code)) return refuse('The query contains a control character');
    // As in the path: the wire gives bytes (≤ 0xFF); a wider character came decoded (a `to=`) and no header can carry it.
    if (code > 0xff) return refuse('The query must be ASCII or %-escaped');
  }
  const path = normalisePath(rawPath);
  if (typeof path !== 'string') return path;
  return { ok: true, path, query, target: path + query };
}

/** A path (no query) in its normalised form, or why it is refused. */
export function normalisePath(rawPath: string): string | { ok: false; reason: string } {
  if (!rawPath.startsWith('/')) return refuse('The path must start with /');
  if (ALREADY_NORMAL.test(rawPath)) return rawPath;
  if (DOUBLE_ENCODED.test(rawPath)) return refuse('The path must not contain a double-encoded ., / or \\');
  let decoded = '';
  for (let i = 0; i < rawPath.length; i++) {
    const char = rawPath.charAt(i);
    const code = rawPath.charCodeAt(i);
    if (char === '%') {
      const hex = rawPath.slice(i + 1, i + 3);
      if (!HEX.test(hex)) return refuse('The path has a malformed %-escape');
      const byte = Number.parseInt(hex, 16);
      if (byte === 0x2f || byte === 0x5c) return refuse('The path must not contain an encoded / or \\');
      if (isControl(byte)) return refuse('The path must not contain control characters');
      const plain = String.fromCharCode(byte);
      decoded += UNRESERVED.test(plain) ? plain : `%${hex.toUpperCase()}`;
      i += 2;
    } else if (char === '\\') {
      return refuse('The path must not contain \\');
    } else if (isControl(code)) {
      return refuse('The path must not contain control characters');
    } else if (code >= 0x80) {
      // Node hands bytes it accepted as latin1 characters; anything beyond one byte is not from the wire.
      if (code > 0xff) return refuse('The path must be ASCII or %-escaped');
      decoded += `%${code.toString(16).toUpperCase()}`;
    } else {
      decoded += ESCAPED.has(char) ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : char;
    }
  }
  // Escapes that are not UTF-8 are read differently by different servers: refused.
  try {
    decodeURIComponent(decoded);
  } catch {
    return refuse('The path has %-escapes that are not UTF-8');
  }
  const segments = decoded.split('/');
  const kept: string[] = [];
  let trailingSlash = false;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    trailingSlash = false;
    if (segment === '' || segment === '.') {
      trailingSlash = last;
    } else if (segment === '..') {
      kept.pop();
      trailingSlash = last;
    } else if (/^\.\.?(;|%3B)/i.test(segment)) {
      return refuse('The path must not contain a . or .. segment with parameters');
    } else {
      kept.push(segment);
    }
  }
  if (kept.length === 0) return '/';
  return `/${kept.join('/')}${trailingSlash ? '/' : ''}`;
}

/**
 * A path on the visitor's own host to send them to (a Location, the URL first asked for): the value
 * normalised — never `//host` or `/\host`, never a scheme — or undefined when it is not a local path.
 */
export function safeLocalPath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const normal = normaliseTarget(value);
  return normal.ok ? normal.target : undefined;
}

function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
