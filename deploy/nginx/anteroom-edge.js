// Verify at the edge with nginx (docs/edge.md): njs 0.7.9 (Debian's libnginx-mod-http-js) checks Anteroom's
// edge cookie inside nginx, so an admitted visitor's request reaches the site with no call to Anteroom.
// anteroom-edge.conf wires three steps:
// - `verdict` (js_content of the verdict server, on a unix socket): nginx's fast path, which finds the room of a
//   plain path with no JavaScript (the maps of anteroom-edge-maps.conf), asks it once about each (room, edge
//   cookie) and caches a "yes" until the cookie's renewal time: 204 with X-Accel-Expires, or 401 (not cached);
// - `fast` (js_set $anteroom_fast, synchronous, once per request): the one normalised path (into $anteroom_path;
//   "bad" = 400), the room of host + path, and the cookie's HMAC-SHA256 when the exported config holds HMAC
//   keys: "pass" (a bypass path, or a valid cookie of the room before its renewal time) or "check";
// - `verify` (an auth_request location, for "check" only): the room (none → 403, a 404 page); a bypass path →
//   204; the cookie checked by HMAC or, without HMAC keys, by its ES256 signature (WebCrypto) → 204; else, with
//   an anteroom_token cookie, one subrequest to Anteroom's /_anteroom/renew (cached by nginx per cookie until
//   the new renewal time, so a burst makes one call) → 204 and the fresh cookie, or 401 (the waiting page).
// Nothing the client sends besides Host (matched against the routes), the request target and those two cookies
// is read.

/* global Buffer, crypto, require */
// njs's own crypto module (HMAC, synchronous: usable in js_set); WebCrypto is the global `crypto`.
const nodeCrypto = require('crypto'); // eslint-disable-line @typescript-eslint/no-require-imports -- njs 0.7.9 has no import of built-ins
import core from 'anteroom-edge-core.js';
import config from 'anteroom-edge-config.js';

const IMPORT = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
};
const VERIFY = {
  ES256: { name: 'ECDSA', hash: 'SHA-256' },
  RS256: { name: 'RSASSA-PKCS1-v1_5' },
};

// With HMAC keys nginx checks cookies by their MAC only: renewals then ask Anteroom for no ES256 signature.
const MAC_ONLY = config.keys.length > 0 && config.keys.every(function (key) { return Boolean(key.hmac); });

function decode(segment) {
  return Buffer.from(segment, 'base64url').toString();
}

function findKey(kid, alg) {
  const keys = config.keys;
  for (let i = 0; i < keys.length; i++) if (keys[i].kid === kid && keys[i].alg === alg) return keys[i];
  return null;
}

function hmac(key, input) {
  return nodeCrypto.createHmac('sha256', key).update(input).digest('base64url');
}

function macValid(key, parsed) {
  return core.sameString(hmac(key.hmac, parsed.signingInput), parsed.mac);
}

/** The request's normalised path (null: refused) and its room (null: none). */
function locate(r) {
  const target = r.variables.request_uri || '';
  const q = target.indexOf('?');
  // A "#" anywhere (the gate refuses it; a URL parser at the origin would cut the path there): refused.
  const path = target.indexOf('#') < 0 ? core.normalisePath(q < 0 ? target : target.slice(0, q)) : null;
  const route = path === null ? null : core.matchRoute(config.routes, r.variables.host, path);
  return { path: path, route: route, query: q < 0 ? '' : target.slice(q + 1) };
}

/**
 * js_set $anteroom_fast: "bad", "pass" or "check"; sets $anteroom_path. Runs for every request: only what an
 * admitted visitor's request needs (a normal path is returned as it is, the key is found by its cookie header,
 * the claims are read only once the MAC verified); anything unusual is left to `verify`.
 */
function fast(r) {
  const target = r.variables.request_uri || '';
  const q = target.indexOf('?');
  // A "#" anywhere (the gate refuses it; a URL parser at the origin would cut the path there): refused.
  const path = target.indexOf('#') < 0 ? core.normalisePath(q < 0 ? target : target.slice(0, q)) : null;
  if (path === null) return 'bad';
  r.variables.anteroom_path = path;
  const route = core.matchRoute(config.routes, r.variables.host, path);
  if (!route) return 'check';
  if (route.bypass_paths.length > 0 && core.bypassed(route, path)) return 'pass';
  const claims = core.macClaims(core.cookieValue(r.headersIn.Cookie, 'anteroom_edge'), config.keys, hmac, decode);
  return claims && core.claimsVerdict(claims, route.event_id, Math.floor(Date.now() / 1000)) === 'admit' ? 'pass' : 'check';
}

/** 'admit', 'renew' or 'refuse' for the edge cookie `value` and room `eventId`; `admit` carries the cookie's `exp`. */
async function edgeVerdict(value, eventId) {
  const parsed = core.parseEdgeCookie(value, decode);
  if (!parsed) return { verdict: 'refuse' };
  const verdict = core.claimsVerdict(parsed.claims, eventId, Math.floor(Date.now() / 1000));
  // Past its renewal time the cookie is not worth a signature check: Anteroom is asked either way.
  if (verdict !== 'admit') return { verdict: verdict };
  const key = findKey(parsed.kid, parsed.alg);
  // A key nginx does not know yet (rotated before the file was reloaded): Anteroom is asked.
  if (!key || !IMPORT[parsed.alg]) return { verdict: 'renew' };
  const admit = { verdict: 'admit', exp: parsed.claims.exp };
  if (key.hmac) return macValid(key, parsed) ? admit : { verdict: 'refuse' };
  const cryptoKey = await crypto.subtle.importKey('spki', Buffer.from(key.spki, 'base64'), IMPORT[parsed.alg], false, ['verify']);
  const valid = await crypto.subtle.verify(VERIFY[parsed.alg], cryptoKey, Buffer.from(parsed.signature, 'base64url'), parsed.signingInput);
  return valid ? admit : { verdict: 'refuse' };
}

/**
 * The verdict server (js_content, reached only by the fast path on a cache miss): the edge cookie in
 * X-Anteroom-Edge for the room in X-Anteroom-Room, both set by nginx, when X-Anteroom-Digest (the maps') is
 * this config's. 204 admits, and may be cached until the
 * second before the cookie's renewal time (nginx's cache serves an entry up to and including its time: "@exp-1"
 * ends with the cookie, as `now < exp` does); 401 otherwise, never cached.
 */
async function verdict(r) {
  const room = r.headersIn['X-Anteroom-Room'];
  const edge = r.headersIn['X-Anteroom-Edge'];
  // The room came from the maps: only when they were exported with this file (the same routes and keys) is it
  // the room njs would find. Otherwise no: njs then routes the request by this file.
  const agreed = typeof config.digest === 'string' && r.headersIn['X-Anteroom-Digest'] === config.digest;
  const answer = agreed && room && edge ? await edgeVerdict(edge, room) : { verdict: 'refuse' };
  if (answer.verdict === 'admit') {
    r.headersOut['X-Accel-Expires'] = '@' + String(answer.exp - 1);
    r.return(204);
    return;
  }
  r.headersOut['X-Accel-Expires'] = '0';
  r.return(401);
}

/** The auth_request handler: 204 let through, 401 waiting page ($anteroom_location), 403 no room protects it. */
async function verify(r) {
  const at = locate(r);
  if (at.path === null || !at.route) {
    r.return(403);
    return;
  }
  if (core.bypassed(at.route, at.path)) {
    r.return(204);
    return;
  }
  const cookies = r.headersIn.Cookie;
  const edge = core.cookieValue(cookies, 'anteroom_edge');
  const verdict = edge ? (await edgeVerdict(edge, at.route.event_id)).verdict : 'renew';
  if (verdict === 'admit') {
    r.return(204);
    return;
  }
  if (core.cookieValue(cookies, 'anteroom_token')) {
    const args = 'event_id=' + encodeURIComponent(at.route.event_id) + (MAC_ONLY ? '&mac_only=1' : '');
    const reply = await r.subrequest('/_anteroom_edge_renew', { args: args, method: 'GET' });
    if (reply.status === 200) {
      const set = reply.headersOut['Set-Cookie'];
      const fresh = Array.isArray(set) ? set[0] : set;
      if (fresh) r.variables.anteroom_set_cookie = fresh;
      r.return(204);
      return;
    }
  }
  r.variables.anteroom_location = core.waitingLocation(at.path, at.query);
  r.return(401);
}

export default { fast, verify, verdict };
