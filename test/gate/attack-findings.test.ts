// What an outside attack on the merged gate (issue 30) still found, each as the request that found it: a real
// gate in front of a real origin, on 127.0.0.1.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { rawRequest } from '../support/raw-http.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };

describe('attack findings on the gate', () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;
  /** A visitor admitted to the room. */
  let visitor: CookieJar;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Home', origin.url)]);
    port = Number(new URL(node.gateUrl).port);
    visitor = new CookieJar();
    const state = (await (await visitor.fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    const by = state.queue_number - state.serving_counter;
    if (by > 0) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Home', increment_by: by })).status, 200);
    assert.equal((await visitor.fetch(`${node.gateUrl}/`)).status, 303);
    assert.ok(visitor.cookies.has(TOKEN_COOKIE));
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('a `to` whose query decodes beyond Latin-1 is never a 500 (a header cannot carry it): the visitor goes to /', async () => {
    // Decoded from the query: ĉ (U+0109), a line separator, an emoji — Node refuses each in a Location header.
    for (const to of ['/x?\u0109', '/x?a=\u2028', '/x?\u{1F600}']) {
      for (const target of [`/_anteroom/wait?to=${encodeURIComponent(to)}`, `/_anteroom/renew?event_id=Home&to=${encodeURIComponent(to)}`]) {
        const answer = await rawRequest(port, 'GET', target, { cookie: visitor.header() });
        assert.equal(answer.status, 303, `${target}: ${answer.body}`);
        assert.equal(answer.headers.location, '/', target);
      }
    }
  });
});
