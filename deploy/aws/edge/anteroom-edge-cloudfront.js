// Verify at the edge with CloudFront (docs/edge.md): a CloudFront Function (cloudfront-js-2.0) on the viewer
// request of the protected site's distribution. NOT RUN ON AWS: only under a shim of its API in Node
// (test/gate/edge-cloudfront.test.ts). Built by deploy/aws/edge/build-function.ts, which puts in the shared rules
// (deploy/nginx/anteroom-edge-core.js, the same as nginx's) and the rooms' routes.
// - the one normalised path (400 if it cannot be), host + path → the room (404 if none), bypass paths;
// - the edge cookie's HMAC-SHA256 under the key named by its kid, read from the function's KeyValueStore
//   (key "edge-hmac-<kid>", 64 hex characters; the stacks would write and rotate them: not built), aud = the
//   room, before its renewal time → the request goes on to the origin with the normalised path;
// - else, with an admission cookie: 302 to Anteroom's /_anteroom/renew?event_id=…&to=… (a function cannot call
//   out: the visitor's browser does, once per renewal interval), which renews and sends the visitor back;
// - else 302 to the waiting page. /_anteroom/* must be a behaviour of the distribution with Anteroom's gate
//   as its origin, without this function.

/* global Buffer */
import cf from 'cloudfront';
import crypto from 'crypto';

const kvs = cf.kvs();
const ROUTES = /*ANTEROOM_ROUTES*/ [];
const core = /*ANTEROOM_CORE*/ null;

function decode(segment) {
  return Buffer.from(segment, 'base64url').toString();
}

/** The query string as the viewer sent it (CloudFront gives it parsed). */
function queryOf(querystring) {
  const parts = [];
  for (const name in querystring) {
    const entry = querystring[name];
    const values = entry.multiValue ? entry.multiValue : [entry];
    for (let i = 0; i < values.length; i++) parts.push(values[i].value === '' ? name : name + '=' + values[i].value);
  }
  return parts.join('&');
}

function answer(status, description, headers, body) {
  const response = { statusCode: status, statusDescription: description, headers: { 'cache-control': { value: 'no-store' } } };
  for (const name in headers) response.headers[name] = { value: headers[name] };
  if (body) response.body = { encoding: 'text', data: body };
  return response;
}

async function macKey(kid) {
  try {
    return await kvs.get('edge-hmac-' + kid);
  } catch (e) { // eslint-disable-line @typescript-eslint/no-unused-vars -- a missing key throws
    return undefined;
  }
}

// CloudFront calls `handler` by name.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
async function handler(event) {
  const request = event.request;
  const path = core.normalisePath(request.uri);
  if (path === null) return answer(400, 'Bad Request', {}, '');
  const host = request.headers.host ? request.headers.host.value : '';
  const route = core.matchRoute(ROUTES, host, path);
  if (!route) return answer(404, 'Not Found', { 'content-type': 'application/json' }, '{"error":"No waiting room protects this URL"}');
  request.uri = path;
  if (core.bypassed(route, path)) return request;
  const cookies = request.cookies || {};
  const parsed = core.parseEdgeCookie(cookies.anteroom_edge ? cookies.anteroom_edge.value : undefined, decode);
  if (parsed && core.claimsVerdict(parsed.claims, route.event_id, Math.floor(Date.now() / 1000)) === 'admit') {
    const key = await macKey(parsed.kid);
    if (key && core.sameString(crypto.createHmac('sha256', key).update(parsed.signingInput).digest('base64url'), parsed.mac)) return request;
  }
  const query = queryOf(request.querystring || {});
  if (cookies.anteroom_token) {
    const to = query ? path + '?' + query : path;
    return answer(302, 'Found', { location: '/_anteroom/renew?event_id=' + encodeURIComponent(route.event_id) + '&mac_only=1&to=' + encodeURIComponent(to) });
  }
  return answer(302, 'Found', { location: core.waitingLocation(path, query) });
}
