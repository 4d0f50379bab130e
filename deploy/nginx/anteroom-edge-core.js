// Verify at the edge (docs/edge.md): the rules shared by the nginx module (anteroom-edge.js, njs 0.7.9) and the
// CloudFront function (deploy/aws/edge/): plain JavaScript that both runtimes and Node run, no I/O, no crypto.
// The gate applies the same rules (one normalised path, then the route of the longest matching prefix).

// RFC 3986 unreserved characters: their percent-encodings are decoded.
function isUnreserved(code) {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) ||
    code === 0x2d || code === 0x2e || code === 0x5f || code === 0x7e;
}

function hexValue(code) {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * The one path a request is checked and forwarded with, or null (the caller answers 400): the gate's rules
 * (src/gate/normalise-path.ts), so that no spelling is checked as one path and served as another:
 * - origin-form only ("/…"; the query, if any, is cut off first by the caller);
 * - %XX of an unreserved character decoded, other %XX kept with upper-case hex; a malformed %, an encoded
 *   "/" or "\", an encoded control character (0x00–0x1f, 0x7f), escapes that are not UTF-8 (%C0%AF), a raw "\",
 *   "#" or control character, a double-encoded ".", "/" or "\" (%252e), or a "." or ".." segment with ";"
 *   parameters (raw or %3B): null;
 * - what a URL parser would escape (space, ", <, >, `, {, }, ^, bytes 0x80–0xff) escaped; a wider character: null;
 * - runs of "/" merged into one, then "." and ".." segments removed (RFC 3986 §5.2.4; ".." never climbs
 *   above the root).
 */
// A path of the characters below, with no "//" and no "/." is normal already: every rule below would give it back
// unchanged (nothing to decode, escape or refuse, no empty, "." or ".." segment). Most requests take this way.
const NEEDS_WORK = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/]|\/\/|\/\./;
// Characters a URL parser escapes in a path: escaped here already (the gate's ESCAPED).
const ESCAPE = ' "<>`{}^';

function percent(code) {
  return '%' + (code < 16 ? '0' : '') + code.toString(16).toUpperCase();
}

function normalisePath(raw) {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 8192 || raw.charCodeAt(0) !== 0x2f) return null;
  if (!NEEDS_WORK.test(raw)) return raw;
  // A double-encoded dot, slash or backslash (%252e): an origin that decodes twice would read "..".
  if (/%25(?:2e|2f|5c)/i.test(raw)) return null;
  let decoded = '';
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 0x25) {
      const high = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 1)) : -1;
      const low = high >= 0 ? hexValue(raw.charCodeAt(i + 2)) : -1;
      if (low < 0) return null;
      const byte = high * 16 + low;
      if (byte === 0x2f || byte === 0x5c || byte < 0x20 || byte === 0x7f) return null;
      decoded += isUnreserved(byte) ? String.fromCharCode(byte) : '%' + raw.charAt(i + 1).toUpperCase() + raw.charAt(i + 2).toUpperCase();
      i += 2;
      continue;
    }
    // "#": a URL parser at the origin would cut the path there (/admin#x is /admin to it).
    if (code === 0x5c || code === 0x23 || code < 0x20 || code === 0x7f || code > 0xff) return null;
    decoded += code >= 0x80 || ESCAPE.indexOf(raw.charAt(i)) >= 0 ? percent(code) : raw.charAt(i);
  }
  // Escapes that are not UTF-8 are read differently by different servers.
  try {
    decodeURIComponent(decoded);
  } catch (e) { // eslint-disable-line @typescript-eslint/no-unused-vars -- njs 0.7.9 needs the binding
    return null;
  }
  const output = [];
  const segments = decoded.split('/');
  // segments[0] is the empty string before the leading "/".
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    // "..;x" or ".;x" (or %3B): servlet containers read it as a dot segment.
    if (/^\.\.?(?:;|%3B)/i.test(segment)) return null;
    if (segment === '.' || segment === '..') {
      if (segment === '..') output.pop();
      // "/a/." and "/a/.." end in a directory: keep the trailing slash.
      if (last) output.push('');
      continue;
    }
    if (segment === '' && !last) continue; // "//" merged
    output.push(segment);
  }
  return '/' + output.join('/');
}

const UPPER = /[A-Z]/;

/** Whether route prefix `prefix` covers `path` by whole segments (both lower-case). */
function pathMatches(prefix, path) {
  if (prefix === '/' || prefix === path) return true;
  if (path.slice(0, prefix.length) !== prefix) return false;
  return prefix.charAt(prefix.length - 1) === '/' || path.charAt(prefix.length) === '/';
}

/**
 * The route of `host` and normalised `path` among `routes` (sorted by Anteroom: first match wins), or null.
 * Hosts and paths compare case-insensitively; a route's host matches the Host with or without its port.
 */
function matchRoute(routes, host, path) {
  // Each string is made only when needed (a route naming a host; a port; upper case): every request runs this.
  let hostName = null;
  let withoutPort = null;
  const lower = UPPER.test(path) ? path.toLowerCase() : path;
  for (let i = 0; i < routes.length; i++) {
    const route = routes[i];
    if (route.host !== undefined) {
      if (hostName === null) {
        hostName = (host || '').toLowerCase();
        withoutPort = hostName.indexOf(':') < 0 ? hostName : hostName.replace(/:\d+$/, '');
      }
      if (route.host !== hostName && route.host !== withoutPort) continue;
    }
    if (pathMatches(route.path, lower)) return route;
  }
  return null;
}

/** Whether a bypass path prefix of the route covers the normalised path. */
function bypassed(route, path) {
  const lower = path.toLowerCase();
  const paths = route.bypass_paths || [];
  for (let i = 0; i < paths.length; i++) if (pathMatches(paths[i], lower)) return true;
  return false;
}

/** The first value of cookie `name` in a Cookie header, or undefined. */
function cookieValue(header, name) {
  if (!header) return undefined;
  const parts = header.split(';');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * An edge cookie's parts, or null: `decode` turns base64url into a string (each runtime has its own).
 * The cookie is header.payload.signature.mac: a compact JWS (ES256) and the HMAC-SHA256 of its signing input.
 * Returns { alg, kid, claims, signingInput, signature, mac }, signature and mac still base64url.
 */
function parseEdgeCookie(value, decode) {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return null;
  const parts = value.split('.');
  if (parts.length !== 4) return null;
  let header;
  let claims;
  try {
    header = JSON.parse(decode(parts[0]));
    claims = JSON.parse(decode(parts[1]));
  } catch (e) { // eslint-disable-line @typescript-eslint/no-unused-vars -- njs 0.7.9 needs the binding
    return null;
  }
  if (!header || typeof header.alg !== 'string' || typeof header.kid !== 'string' || !claims || typeof claims !== 'object') return null;
  return { alg: header.alg, kid: header.kid, claims: claims, signingInput: parts[0] + '.' + parts[1], signature: parts[2], mac: parts[3] };
}

/**
 * The claims of edge cookie `value` when its fourth part is the HMAC-SHA256 of its first two under one of `keys`,
 * else null: the fast check, with no JSON read before the MAC verified. Each key is { header, hmac }: `header` is
 * the first part of the cookies Anteroom signs with it (its JWS header, base64url), so the key is found by a
 * string comparison. `mac(key, input)` is the runtime's HMAC-SHA256 in base64url, `decode` its base64url decoder.
 * The third part (the ES256 signature) may be empty: a cookie renewed for an edge that checks only the HMAC.
 */
function macClaims(value, keys, mac, decode) {
  if (typeof value !== 'string' || value.length > 2048) return null;
  const first = value.indexOf('.');
  const second = first < 0 ? -1 : value.indexOf('.', first + 1);
  const third = second < 0 ? -1 : value.indexOf('.', second + 1);
  if (third < 0 || value.indexOf('.', third + 1) >= 0) return null;
  const header = value.slice(0, first);
  let key = null;
  for (let i = 0; i < keys.length; i++) if (keys[i].hmac && keys[i].header === header) key = keys[i];
  if (!key || !sameString(mac(key.hmac, value.slice(0, second)), value.slice(third + 1))) return null;
  let claims;
  try {
    claims = JSON.parse(decode(value.slice(first + 1, second)));
  } catch (e) { // eslint-disable-line @typescript-eslint/no-unused-vars -- njs 0.7.9 needs the binding
    return null;
  }
  return claims && typeof claims === 'object' ? claims : null;
}

/** Whether two strings are equal, in time that depends only on their lengths. */
function sameString(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * What the claims of a cookie whose signature verified say for room `eventId` at `nowSec`: 'admit' (the room's,
 * before its renewal time), 'renew' (the room's, renewal time passed), or 'refuse'.
 */
function claimsVerdict(claims, eventId, nowSec) {
  if (claims.aud !== eventId || typeof claims.sub !== 'string' || typeof claims.exp !== 'number') return 'refuse';
  return nowSec < claims.exp ? 'admit' : 'renew';
}

/** The waiting page for a visitor without a valid cookie: the normalised path and query to come back to. */
function waitingLocation(path, query) {
  const to = query ? path + '?' + query : path;
  return '/_anteroom/wait?to=' + encodeURIComponent(to);
}

export default { normalisePath, pathMatches, matchRoute, bypassed, cookieValue, parseEdgeCookie, macClaims, sameString, claimsVerdict, waitingLocation };
