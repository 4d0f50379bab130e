// The periodic inlet's pause signal against a real HTTP server on 127.0.0.1: non-2xx, a JSON metric over
// its threshold, and "cannot tell" (timeout, refused connection, unusable body) all mean ALARM.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkPause } from '../../src/inlet/pause-check.ts';
import { startHealthServer, type HealthServer } from './helpers.ts';

describe('pause check', () => {
  let site: HealthServer;
  before(async () => {
    site = await startHealthServer();
  });
  after(() => site.close());

  const check = (extra: { json_path?: string; threshold?: number; timeout?: number } = {}) =>
    checkPause({ url: site.url, timeout: 30, ...extra });

  it('200 → OK', async () => {
    site.answer = { status: 200, body: '{}', delayMs: 0 };
    assert.equal((await check()).state, 'OK');
  });

  it('204 and other 2xx → OK', async () => {
    site.answer = { status: 204, body: '', delayMs: 0 };
    assert.equal((await check()).state, 'OK');
  });

  it('503 → ALARM, naming the status', async () => {
    site.answer = { status: 503, body: '{"status":"overloaded"}', delayMs: 0 };
    const verdict = await check();
    assert.equal(verdict.state, 'ALARM');
    assert.match(verdict.reason, /503/);
  });

  it('404 → ALARM (any status outside 2xx)', async () => {
    site.answer = { status: 404, body: 'not here', delayMs: 0 };
    assert.equal((await check()).state, 'ALARM');
  });

  it('JSON metric under or at the threshold → OK; over it → ALARM', async () => {
    site.answer = { status: 200, body: '{"cpu":{"load":0.5}}', delayMs: 0 };
    assert.equal((await check({ json_path: '$.cpu.load', threshold: 0.8 })).state, 'OK');
    site.answer = { status: 200, body: '{"cpu":{"load":0.8}}', delayMs: 0 };
    assert.equal((await check({ json_path: '$.cpu.load', threshold: 0.8 })).state, 'OK');
    site.answer = { status: 200, body: '{"cpu":{"load":0.95}}', delayMs: 0 };
    const verdict = await check({ json_path: '$.cpu.load', threshold: 0.8 });
    assert.equal(verdict.state, 'ALARM');
    assert.match(verdict.reason, /0\.95.*0\.8/);
  });

  it('a metric given as a numeric string is read as a number', async () => {
    site.answer = { status: 200, body: '{"queue_depth":"120"}', delayMs: 0 };
    assert.equal((await check({ json_path: 'queue_depth', threshold: 100 })).state, 'ALARM');
    assert.equal((await check({ json_path: 'queue_depth', threshold: 200 })).state, 'OK');
  });

  it('a non-2xx answer is ALARM even when its metric is fine', async () => {
    site.answer = { status: 500, body: '{"load":0}', delayMs: 0 };
    assert.equal((await check({ json_path: 'load', threshold: 1 })).state, 'ALARM');
  });

  it('cannot tell → ALARM (fail safe): metric missing, not a number, body not JSON', async () => {
    site.answer = { status: 200, body: '{"other":1}', delayMs: 0 };
    assert.match((await check({ json_path: 'load', threshold: 1 })).reason, /no number at load/);
    site.answer = { status: 200, body: '{"load":"high"}', delayMs: 0 };
    assert.equal((await check({ json_path: 'load', threshold: 1 })).state, 'ALARM');
    site.answer = { status: 200, body: '<html>ok</html>', delayMs: 0 };
    const verdict = await check({ json_path: 'load', threshold: 1 });
    assert.equal(verdict.state, 'ALARM');
    assert.match(verdict.reason, /not JSON/);
  });

  it('no answer within the timeout → ALARM', async () => {
    // The site answers only after an hour: the check can end only through its own timeout.
    site.answer = { status: 200, body: '{}', delayMs: 3_600_000 };
    const verdict = await check({ timeout: 0.2 });
    assert.equal(verdict.state, 'ALARM');
    assert.match(verdict.reason, /no answer within 0.2 s/);
  });

  it('connection refused → ALARM', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const verdict = await checkPause({ url: `http://127.0.0.1:${port}/health`, timeout: 2 });
    assert.equal(verdict.state, 'ALARM');
    assert.match(verdict.reason, /ECONNREFUSED/);
  });
});
