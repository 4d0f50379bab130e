// A hostile visitor against the draw's paths on the gate (GET /_anteroom/draw, /_anteroom/draw-data and the check
// page /_anteroom/draw-check/) and on the site (/draw-check/): path tricks, huge and odd query strings, Host and
// X-Forwarded-* spoofing, cache headers, reflected input and the page's CSP. Each finding of the attack pass is the
// request that found it: one gate protecting two sites (a.example, b.example), on 127.0.0.1.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PLACE_COOKIE } from '../../src/gate/cookies.ts';
import { rawRequest } from '../support/raw-http.ts';
import { TestClock } from '../support/node.ts';
import { startWebNode, type WebNode } from '../web/support.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const START = Date.UTC(2026, 10, 25, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const onHost = (host: string) => ({ origin: '', routes: [{ host, path: '/' }], queueing_status_code: 200 });

describe('the draw on the gate, attacked', () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;
  /** The place cookie of a visitor of a.example, in room A. */
  let cookie: string;
  let visitorId: string;

  before(async () => {
    origin = await startOrigin();
    const draw = { prequeue_start_time: iso(START - 3_600_000), event_start_time: iso(START), shuffle_at_event_start: true };
    node = await startGateNode(
      [
        gatedRoom('A', origin.url, { ...draw, gate: { ...onHost('a.example'), origin: origin.url } }),
        gatedRoom('B', origin.url, { ...draw, gate: { ...onHost('b.example'), origin: origin.url } }),
      ],
      {},
      { clock: new TestClock(START - 600_000) },
    );
    port = Number(new URL(node.gateUrl).port);
    await node.room.draws.runDraws(); // the commitments, published before the start
    const answer = await rawRequest(port, 'GET', '/', { host: 'a.example', accept: 'application/json' });
    assert.equal(answer.status, 200, answer.body);
    visitorId = (JSON.parse(answer.body) as { request_id: string }).request_id;
    const place = (answer.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]!).find((pair) => pair.startsWith(`${PLACE_COOKIE}=`));
    assert.ok(place);
    cookie = place;
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  const get = (path: string, headers: Record<string, string>) => rawRequest(port, 'GET', path, headers);

  it("a site's address answers only for the rooms that protect it, whatever X-Forwarded-Host says", async () => {
    assert.equal((await get('/_anteroom/draw-data?event_id=A', { host: 'a.example' })).status, 200);
    // Found: b.example/_anteroom/draw-data answered room A's draw (any gated room, on any host).
    const spoofs: Record<string, string>[] = [{ host: 'b.example' }, { host: 'b.example', 'x-forwarded-host': 'a.example' }, { host: 'B.EXAMPLE.' }];
    for (const headers of spoofs) {
      const answer = await get('/_anteroom/draw-data?event_id=A', headers);
      assert.equal(answer.status, 404, JSON.stringify(headers));
      assert.deepEqual(JSON.parse(answer.body), { error: 'No waiting room protects this URL' });
      assert.equal(answer.headers['cache-control'], 'no-store');
    }
    assert.equal((await get('/_anteroom/draw-data?event_id=A', { host: 'A.example.:80' })).status, 200, 'the same site, spelt otherwise');
    // Found: a.example/_anteroom/draw?event_id=B sent a.example's visitors to the check page of b.example's room.
    const other = await get('/_anteroom/draw?event_id=B', { host: 'a.example', cookie: cookie });
    assert.equal(other.status, 303);
    assert.equal(other.headers.location, `/_anteroom/draw-check/?event_id=A&draw=%2F_anteroom%2Fdraw-data#request_id=${visitorId}`);
    // The cookie of a.example shown to b.example (a cookie is the host's; the gate checks the room's host too).
    const elsewhere = await get('/_anteroom/draw', { host: 'b.example', cookie: cookie });
    assert.equal(elsewhere.headers.location, '/_anteroom/draw-check/');
  });

  it('the way to the check page stays under /_anteroom/ (found: the slash-less address went to the site\'s own path)', async () => {
    for (const page of ['draw-check', 'waiting-room-site', 'control-panel']) {
      const answer = await get(`/_anteroom/${page}?event_id=A&x=%22%3E`, { host: 'a.example' });
      assert.equal(answer.status, 301, page);
      assert.equal(answer.headers.location, `/_anteroom/${page}/?event_id=A&x=%22%3E`);
    }
  });

  it('path tricks, odd and huge queries: a 4xx in the JSON error shape or the fixed redirect, never a 5xx, nothing reflected', async () => {
    const cases: [string, number][] = [
      ['/_anteroom/draw/', 404],
      ['/_anteroom//draw', 404],
      ['/_anteroom/draw;x', 404],
      ['/_anteroom/draw-data/', 404],
      ['/_anteroom/draw-data?event_id[]=A', 404],
      ['/_anteroom/draw-data?event_id=A&event_id=B', 404],
      ['/_anteroom/draw-data?event_id=__proto__', 404],
      ['/_anteroom/draw-data?event_id=A%00', 404],
      ['/_anteroom/draw-data?event_id=%3Cscript%3Ealert(1)%3C%2Fscript%3E', 404],
      ['/_anteroom/draw-data?event_id=A&page=0', 400],
      ['/_anteroom/draw-data?event_id=A&page=1e3', 400],
      ['/_anteroom/draw-data?event_id=A&page=1&page=2', 400],
      [`/_anteroom/draw-data?event_id=${'A'.repeat(8_000)}`, 404],
      [`/_anteroom/draw-data?event_id=A&pad=${'x'.repeat(70_000)}`, 431],
      ['/_anteroom/draw-check/..%2f..%2fpackage.json', 404],
      ['/_anteroom/draw-check/%2e%2e/%2e%2e/package.json', 404],
    ];
    for (const [path, status] of cases) {
      const answer = await get(path, { host: 'a.example' });
      assert.equal(answer.status, status, `${path.slice(0, 80)}: ${answer.body.slice(0, 200)}`);
      assert.equal(typeof (JSON.parse(answer.body) as { error: unknown }).error, 'string');
      assert.doesNotMatch(answer.body, /script|alert|package|AAAAAAAA/);
    }
    for (const path of ['/_anteroom/draw?event_id=%3Cscript%3E', '/_anteroom/draw?event_id=A%0D%0ASet-Cookie:%20x=1', '/_anteroom/%64raw?event_id=A']) {
      const answer = await get(path, { host: 'a.example' });
      assert.equal(answer.status, 303, path);
      assert.match(String(answer.headers.location), /^\/_anteroom\/draw-check\/(\?event_id=A&draw=%2F_anteroom%2Fdraw-data)?$/);
      assert.equal(answer.headers['set-cookie'], undefined);
    }
  });

  it('cache headers: the redirect (which carries a request ID) is never stored; the publication is the same for all and short-lived', async () => {
    const redirect = await get('/_anteroom/draw', { host: 'a.example', cookie: cookie });
    assert.equal(redirect.headers['cache-control'], 'no-store');
    assert.equal(redirect.headers['referrer-policy'], 'no-referrer');
    const data = await get('/_anteroom/draw-data?event_id=A', { host: 'a.example', cookie: cookie });
    assert.equal(data.headers['cache-control'], 'public, max-age=1');
    assert.equal(data.headers['set-cookie'], undefined, 'nothing of the visitor in a shared answer');
    assert.doesNotMatch(data.body, new RegExp(visitorId));
    const page = await get('/_anteroom/draw-check/?event_id=A', { host: 'a.example', cookie: cookie });
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.equal(page.headers['set-cookie'], undefined);
  });

  it("the check page: the site's policy (no inline script, no framing, nothing from elsewhere but the fetch), nothing of the query in it", async () => {
    const page = await get('/_anteroom/draw-check/?event_id=%22%3E%3Cscript%3Ealert(1)%3C/script%3E', { host: 'a.example' });
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    for (const directive of ["script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'", "default-src 'self'"]) assert.ok(csp.includes(directive), directive);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.doesNotMatch(page.body, /alert|<script>/);
    assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  });
});

describe('the check page on the site, attacked', () => {
  let node: WebNode;
  before(async () => {
    node = await startWebNode();
  });
  after(() => node?.stop());

  it('the slash-less address keeps its query on this host; the page carries the policy; /draw refuses odd queries with a 4xx', async () => {
    const port = Number(new URL(node.url).port);
    const slashless = await rawRequest(port, 'GET', '/draw-check?event_id=Drop&api=https://evil.example', { host: 'evil.example' });
    assert.equal(slashless.status, 301);
    assert.equal(slashless.headers.location, '/draw-check/?event_id=Drop&api=https://evil.example', 'a path, never the Host');
    const page = await rawRequest(port, 'GET', '/draw-check/?event_id=%3Cb%3E', { host: 'evil.example', 'x-forwarded-host': 'evil.example' });
    assert.equal(page.status, 200);
    assert.ok(String(page.headers['content-security-policy']).includes("script-src 'self'"));
    assert.doesNotMatch(page.body, /evil|<b>/);
    for (const [path, status] of [
      ['/draw?event_id=%3Cb%3E', 400],
      ['/draw?event_id=Sample&page=-1', 400],
      ['/draw?event_id=Sample&event_id=Other', 400],
      [`/draw?event_id=Sample&x=${'y'.repeat(70_000)}`, 431],
    ] as const) {
      const answer = await rawRequest(port, 'GET', path);
      assert.equal(answer.status, status, `${path.slice(0, 60)}: ${answer.body.slice(0, 200)}`);
      assert.doesNotMatch(answer.body, /<b>/);
    }
  });
});
