// A node with OpenID Connect clients, and the HTTP calls the login page makes (tests drive the page's
// journey with plain HTTP instead of a browser).

import assert from 'node:assert/strict';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { eventSettings, startTestNode, TestClock, type TestNode } from '../support/node.ts';

export const SHOP = 'Shop';
export const REDIRECT_URI = 'https://rp.example/oauth2/idpresponse';
/** A registered redirect URI that already has a query: the response parameters must be appended to it. */
export const REDIRECT_URI_WITH_QUERY = 'https://rp.example/callback?tenant=blue';
/** An event with a secret set in the configuration file. */
export const CONFIGURED = 'Configured';
export const CONFIGURED_SECRET = 'configured-secret-0123456789-abcdef';
/** An event without OpenID Connect. */
export const PLAIN = 'Plain';

export function oidcEvents(): RoomSettings[] {
  return [
    eventSettings(SHOP, { oidc: { redirect_uris: [REDIRECT_URI, REDIRECT_URI_WITH_QUERY] } }),
    eventSettings(CONFIGURED, { oidc: { client_secret: CONFIGURED_SECRET, redirect_uris: [REDIRECT_URI] } }),
    eventSettings(PLAIN),
  ];
}

/**
 * openid-client checks iat/exp against the real clock, so the node's clock starts at the real time (and is
 * moved by hand only in tests that do not hand tokens to openid-client afterwards).
 */
export function startOidcNode(events: RoomSettings[] = oidcEvents()): Promise<TestNode> {
  const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000) as TestClock & (() => number);
  return startTestNode({ events }, { clock });
}

export const issuerOf = (node: TestNode) => `${node.url}/oidc`;

export async function clientSecretOf(node: TestNode, eventId: string): Promise<string> {
  const response = await node.admin('GET', `/oidc/client?event_id=${eventId}`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { client_secret: string }).client_secret;
}

/** Moves the serving counter to `position` unless it is there already. */
export async function serveUpTo(node: TestNode, eventId: string, position: number): Promise<void> {
  const serving = ((await (await node.get(`/serving_num?event_id=${eventId}`)).json()) as { serving_counter: number })
    .serving_counter;
  if (serving >= position) return;
  const response = await node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: position - serving });
  assert.equal(response.status, 200);
}

/** GET /authorize without following the redirect. */
export function authorize(node: TestNode, params: Record<string, string> | URLSearchParams | string, headers: Record<string, string> = {}) {
  const query = typeof params === 'string' ? params : new URLSearchParams(params).toString();
  return fetch(`${issuerOf(node)}/authorize?${query}`, { redirect: 'manual', headers });
}

export function authorizeParams(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    client_id: SHOP,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'openid',
    state: 'state-1',
    ...overrides,
  };
}

export interface Joined {
  request_id: string;
  queue_number: number;
  event_id: string;
}

/**
 * What a browser does from the authorization URL to the queue: follow /authorize's 302 to the login page,
 * load it, and make its join call with the parameters of its URL. Returns the page URL and the join answer.
 */
export async function enterWaitingRoom(authorizationUrl: URL | string): Promise<{ loginUrl: URL; joined: Joined }> {
  const redirect = await fetch(authorizationUrl, { redirect: 'manual' });
  assert.equal(redirect.status, 302, await redirect.clone().text());
  const loginUrl = new URL(redirect.headers.get('location') ?? '', authorizationUrl);
  assert.equal(loginUrl.pathname, '/oidc/login');
  const page = await fetch(loginUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  const join = await postJson(new URL('join', loginUrl), Object.fromEntries(loginUrl.searchParams));
  assert.equal(join.status, 200, JSON.stringify(join.body));
  return { loginUrl, joined: join.body as unknown as Joined };
}

/** The login page's call once the serving counter reaches its position. */
export function continueLogin(node: TestNode, clientId: string, requestId: string) {
  return postJson(`${issuerOf(node)}/continue`, { client_id: clientId, request_id: requestId });
}

export async function postJson(url: URL | string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** POST /token with a form body. */
export async function tokenRequest(
  node: TestNode,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${issuerOf(node)}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A served visitor of SHOP who joined through /authorize with these extra parameters; returns the code. */
export async function servedCode(node: TestNode, extra: Record<string, string> = {}): Promise<string> {
  const url = new URL(`${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams(extra))}`);
  const { joined } = await enterWaitingRoom(url);
  await serveUpTo(node, SHOP, joined.queue_number);
  return joined.request_id;
}
