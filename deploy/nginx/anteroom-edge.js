// Verify at the edge with nginx (docs/edge.md): njs 0.7.9 (Debian's libnginx-mod-http-js) checks Anteroom's
// edge cookie inside nginx, so an admitted visitor's request reaches the site with no call to Anteroom.
// anteroom-edge.conf wires it: js_set $anteroom_path (the one normalised path; "" = 400), and auth_request to a
// location running `verify`:
//   host + normalised path → the room (anteroom-edge-config.js, exported by Anteroom); none → 403 (404 page);
//   a bypass path → 204;
//   anteroom_edge cookie signed by a listed key, aud = the room, before its exp → 204, no call;
//   else, with an anteroom_token cookie → one subrequest to Anteroom's /_anteroom/renew (cached by nginx per
//   cookie until the new renewal time, so a burst makes one call) → 204 and the fresh cookie, or 401;
//   else 401: the waiting page.
// Nothing the client sends besides Host (matched against the routes; nginx's server_name chooses the server),
// the request target and those two cookies is read.

/* global Buffer, crypto */
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

function decode(segment) {
  return Buffer.from(segment, 'base64url').toString();
}

function pathOf(target) {
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}

/** js_set $anteroom_path: the normalised path of the request, or "" when it is refused (400). */
function path(r) {
  const normalised = core.normalisePath(pathOf(r.variables.request_uri || ''));
  return normalised === null ? '' : normalised;
}

function findKey(kid, alg) {
  const keys = config.keys;
  for (let i = 0; i < keys.length; i++) if (keys[i].kid === kid && keys[i].alg === alg) return keys[i];
  return null;
}

/** 'admit', 'renew' or 'refuse' for the edge cookie `value` and room `eventId`. */
async function edgeVerdict(value, eventId) {
  const parsed = core.parseEdgeCookie(value, decode);
  if (!parsed) return 'refuse';
  const verdict = core.claimsVerdict(parsed.claims, eventId, Math.floor(Date.now() / 1000));
  // Past its renewal time the cookie is not worth a signature check: Anteroom is asked either way.
  if (verdict !== 'admit') return verdict;
  const key = findKey(parsed.kid, parsed.alg);
  // A key nginx does not know yet (rotated before the file was reloaded): Anteroom is asked.
  if (!key || !IMPORT[parsed.alg]) return 'renew';
  const cryptoKey = await crypto.subtle.importKey('spki', Buffer.from(key.spki, 'base64'), IMPORT[parsed.alg], false, ['verify']);
  const valid = await crypto.subtle.verify(VERIFY[parsed.alg], cryptoKey, Buffer.from(parsed.signature, 'base64url'), parsed.signingInput);
  return valid ? 'admit' : 'refuse';
}

/** The auth_request handler: 204 let through, 401 waiting page ($anteroom_location), 403 no room protects it. */
async function verify(r) {
  const target = r.variables.request_uri || '';
  const normalised = core.normalisePath(pathOf(target));
  if (normalised === null) {
    r.return(403);
    return;
  }
  const route = core.matchRoute(config.routes, r.variables.host, normalised);
  if (!route) {
    r.return(403);
    return;
  }
  if (core.bypassed(route, normalised)) {
    r.return(204);
    return;
  }
  const cookies = r.headersIn.Cookie;
  const edge = core.cookieValue(cookies, 'anteroom_edge');
  const verdict = edge ? await edgeVerdict(edge, route.event_id) : 'renew';
  if (verdict === 'admit') {
    r.return(204);
    return;
  }
  if (core.cookieValue(cookies, 'anteroom_token')) {
    const reply = await r.subrequest('/_anteroom_edge_renew', { args: 'event_id=' + encodeURIComponent(route.event_id), method: 'GET' });
    if (reply.status === 200) {
      const set = reply.headersOut['Set-Cookie'];
      const fresh = Array.isArray(set) ? set[0] : set;
      if (fresh) r.variables.anteroom_set_cookie = fresh;
      r.return(204);
      return;
    }
  }
  const q = target.indexOf('?');
  r.variables.anteroom_location = core.waitingLocation(normalised, q < 0 ? '' : target.slice(q + 1));
  r.return(401);
}

export default { path, verify };
