// The pages' logic that needs no browser: retry policy, URL parameters, the stored place.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACTION_BACKOFF, backoffDelay, fetchWithRetry, isRetryableStatus, retryAfterMs } from '../../web/shared/retry.ts';
import { listedOrigins, readSettings } from '../../web/shared/settings.ts';
import { VisitStore } from '../../web/waiting-room-site/visit-store.ts';

const noSleep = async () => undefined;

describe('retries', () => {
  it('only network errors, 429 and 5xx are retried', () => {
    for (const status of [429, 500, 502, 503, 504]) assert.equal(isRetryableStatus(status), true, String(status));
    for (const status of [200, 202, 400, 401, 403, 404, 405, 410, 413]) assert.equal(isRetryableStatus(status), false, String(status));
  });

  it('back-off doubles from the base, with jitter, and is capped', () => {
    const policy = { baseMs: 500, capMs: 8_000, maxAttempts: 10 };
    assert.equal(backoffDelay(0, policy, () => 0), 250);
    assert.equal(backoffDelay(0, policy, () => 1), 500);
    assert.equal(backoffDelay(3, policy, () => 1), 4_000);
    assert.equal(backoffDelay(4, policy, () => 1), 8_000);
    assert.equal(backoffDelay(40, policy, () => 1), 8_000);
    assert.equal(backoffDelay(40, policy, () => 0), 4_000);
  });

  it('Retry-After (seconds or date) is honoured, within a minute', () => {
    assert.equal(retryAfterMs(new Response(null, { status: 503, headers: { 'retry-after': '3' } })), 3_000);
    assert.equal(retryAfterMs(new Response(null, { status: 503, headers: { 'retry-after': '3600' } })), 60_000);
    const now = Date.UTC(2026, 0, 1);
    const date = new Date(now + 10_000).toUTCString();
    assert.equal(retryAfterMs(new Response(null, { status: 429, headers: { 'retry-after': date } }), now), 10_000);
    assert.equal(retryAfterMs(new Response(null, { status: 503 })), undefined);
  });

  it('a retryable answer is retried until success; a final one is returned at once', async () => {
    const statuses = [503, 429, 200];
    let calls = 0;
    const response = await fetchWithRetry(async () => new Response('{}', { status: statuses[calls++]! }), ACTION_BACKOFF, { sleep: noSleep });
    assert.equal(response.status, 200);
    assert.equal(calls, 3);

    calls = 0;
    const refused = await fetchWithRetry(async () => (calls++, new Response('{}', { status: 403 })), ACTION_BACKOFF, { sleep: noSleep });
    assert.equal(refused.status, 403);
    assert.equal(calls, 1);
  });

  it('gives up after maxAttempts: the last response, or the network error', async () => {
    let calls = 0;
    const policy = { baseMs: 1, capMs: 1, maxAttempts: 3 };
    const last = await fetchWithRetry(async () => (calls++, new Response('{}', { status: 500 })), policy, { sleep: noSleep });
    assert.equal(last.status, 500);
    assert.equal(calls, 3);
    calls = 0;
    await assert.rejects(
      fetchWithRetry(async () => (calls++, Promise.reject(new TypeError('fetch failed'))), policy, { sleep: noSleep }),
      TypeError,
    );
    assert.equal(calls, 3);
  });
});

describe("URL parameters (VWR's names)", () => {
  it('default to this origin', () => {
    assert.deepEqual(readSettings('', 'https://room.example'), {
      eventId: 'Sample',
      publicApiUrl: 'https://room.example',
      privateApiUrl: 'https://room.example/private',
      commerceApiUrl: 'https://room.example/store',
      regionName: 'us-east-1',
      ignored: [],
    });
  });

  it('eventId, publicApiUrl, commerceApiUrl, privateApiUrl and regionName are taken, trailing slashes dropped', () => {
    const settings = readSettings(
      '?eventId=Launch-2&publicApiUrl=https://abc.execute-api.eu-west-1.amazonaws.com/api/&commerceApiUrl=https://shop.example/api&privateApiUrl=https://p.example/private/&regionName=eu-west-1',
      'https://room.example',
    );
    assert.equal(settings.eventId, 'Launch-2');
    assert.equal(settings.publicApiUrl, 'https://abc.execute-api.eu-west-1.amazonaws.com/api');
    assert.equal(settings.commerceApiUrl, 'https://shop.example/api');
    assert.equal(settings.privateApiUrl, 'https://p.example/private');
    assert.equal(settings.regionName, 'eu-west-1');
  });

  it("the waiting page calls only its own origin and the room's allowed_api_origins, whatever a link says", () => {
    const origin = 'https://room.example';
    const read = (search: string, apiOrigins: string[] = []) => readSettings(search, origin, apiOrigins);
    // Its own origin (any path) and a listed one are taken.
    assert.equal(read('?publicApiUrl=https://room.example/api/').publicApiUrl, 'https://room.example/api');
    assert.equal(read('?publicApiUrl=https://api.example/v1', ['https://api.example']).publicApiUrl, 'https://api.example/v1');
    assert.equal(read('?commerceApiUrl=https://api.example/store', ['https://api.example']).commerceApiUrl, 'https://api.example/store');
    // Anything else falls back to its own origin, and is reported (the page says so).
    for (const evil of [
      'https://attacker.example',
      'https://room.example.attacker.example',
      'https://room.example@attacker.example',
      'http://room.example',
      'https://room.example:8443',
      '//attacker.example',
      'https://api.example.attacker.example',
    ]) {
      const settings = read(`?publicApiUrl=${encodeURIComponent(evil)}&commerceApiUrl=${encodeURIComponent(evil)}`, ['https://api.example']);
      assert.equal(settings.publicApiUrl, origin, evil);
      assert.equal(settings.commerceApiUrl, `${origin}/store`, evil);
      assert.deepEqual(settings.ignored.sort(), ['commerceApiUrl', 'publicApiUrl'], evil);
    }
  });

  it("reads the allowed origins from the page's meta: space-separated origins, junk left out", () => {
    assert.deepEqual(listedOrigins('https://api.example  http://127.0.0.1:8080/ javascript:alert(1) nonsense'), ['https://api.example', 'http://127.0.0.1:8080']);
    assert.deepEqual(listedOrigins(''), []);
    assert.deepEqual(listedOrigins(null), []);
  });

  it('unusable values are reported and replaced by the defaults', () => {
    const settings = readSettings('?eventId=<script>&publicApiUrl=javascript:alert(1)&regionName=EU WEST', 'https://room.example');
    assert.equal(settings.eventId, 'Sample');
    assert.equal(settings.publicApiUrl, 'https://room.example');
    assert.deepEqual(settings.ignored.sort(), ['eventId', 'publicApiUrl', 'regionName']);
  });
});

class MemoryStorage implements Storage {
  private map = new Map<string, string>();
  get length() {
    return this.map.size;
  }
  clear() {
    this.map.clear();
  }
  getItem(key: string) {
    return this.map.get(key) ?? null;
  }
  key(index: number) {
    return [...this.map.keys()][index] ?? null;
  }
  removeItem(key: string) {
    this.map.delete(key);
  }
  setItem(key: string, value: string) {
    this.map.set(key, value);
  }
}

describe("the visitor's stored place", () => {
  const id = '0c30325d-3527-48c7-8967-f71183b274ae';

  it('is kept per waiting room (API URL and event)', () => {
    const storage = new MemoryStorage();
    new VisitStore('https://a.example', 'Sample', storage).save({ requestId: id, joinedAt: 1, position: 7 });
    assert.deepEqual(new VisitStore('https://a.example', 'Sample', storage).load(), { requestId: id, joinedAt: 1, position: 7 });
    assert.equal(new VisitStore('https://a.example', 'Other', storage).load(), undefined);
    assert.equal(new VisitStore('https://b.example', 'Sample', storage).load(), undefined);
  });

  it('ignores garbage and survives a storage that refuses to work', () => {
    const storage = new MemoryStorage();
    const store = new VisitStore('https://a.example', 'Sample', storage);
    storage.setItem(store.key, '{"requestId":"not-a-uuid"}');
    assert.equal(store.load(), undefined);
    storage.setItem(store.key, 'not json');
    assert.equal(store.load(), undefined);

    const refusing = new MemoryStorage();
    refusing.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    const fallback = new VisitStore('https://a.example', 'Sample', refusing);
    fallback.save({ requestId: id, joinedAt: 2 });
    assert.equal(fallback.load()?.requestId, id);
    fallback.clear();
    assert.equal(fallback.load(), undefined);
  });
});
