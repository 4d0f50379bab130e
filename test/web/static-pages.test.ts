import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, constants as zlib, gunzipSync, gzipSync } from 'node:zlib';
import { chooseEncoding, compressible, WEB_DIST_DIR } from '../../src/web/static-pages.ts';
import { pageUrls } from '../../src/web/index.ts';
import { eventSettings } from '../support/node.ts';
import { ensurePagesBuilt, startWebNode, type WebNode } from './support.ts';

const PAGE = `<!doctype html><title>Waiting room</title><script type="module" src="../assets/app-AbC123.js"></script>${'<p>filler</p>'.repeat(50)}`;
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;
const BUILT = `console.log(${JSON.stringify('y'.repeat(2000))});`;
// What the build wrote beside assets/built-XyZ789.js: a brotli form (at quality 1, so it differs from what the
// server would make) and a stale gzip form, of other content.
const BUILT_BR = brotliCompressSync(BUILT, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1 } });
const STALE_GZ = gzipSync('console.log("an older build");'.repeat(20));

function fixture(): string {
  const root = mkdtempSync(join(tmpdir(), 'anteroom-web-'));
  for (const page of ['waiting-room-site', 'control-panel']) {
    mkdirSync(join(root, page));
    writeFileSync(join(root, page, 'index.html'), PAGE);
  }
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'assets', 'app-AbC123.js'), SCRIPT);
  writeFileSync(join(root, 'assets', 'built-XyZ789.js'), BUILT);
  writeFileSync(join(root, 'assets', 'built-XyZ789.js.br'), BUILT_BR);
  writeFileSync(join(root, 'assets', 'built-XyZ789.js.gz'), STALE_GZ);
  return root;
}

describe('static pages', () => {
  let node: WebNode;
  let root: string;
  before(async () => {
    root = fixture();
    node = await startWebNode({}, { root });
  });
  after(async () => {
    await node.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves each page at its directory URL, revalidated on every load, with a strict CSP', async () => {
    for (const path of ['/waiting-room-site/', '/control-panel/']) {
      const response = await fetch(`${node.url}${path}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      assert.match(response.headers.get('etag') ?? '', /^"[\w-]+"$/);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(await response.text(), PAGE);
    }
  });

  it('hashed assets are cacheable for a year, immutable', async () => {
    const response = await fetch(`${node.url}/assets/app-AbC123.js`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(await response.text(), SCRIPT);
  });

  it('an unchanged file answers 304 to If-None-Match', async () => {
    const first = await fetch(`${node.url}/waiting-room-site/`);
    const etag = first.headers.get('etag')!;
    const second = await fetch(`${node.url}/waiting-room-site/`, { headers: { 'if-none-match': etag } });
    assert.equal(second.status, 304);
    assert.equal(second.headers.get('etag'), etag);
    assert.equal(second.headers.get('cache-control'), 'no-cache');
  });

  it('sends brotli or gzip, compressed once at start, as the client accepts', async () => {
    const raw = (encoding: string) =>
      // fetch decodes the body; Content-Encoding tells what was sent.
      fetch(`${node.url}/assets/app-AbC123.js`, { headers: { 'accept-encoding': encoding } }).then(async (r) => ({
        encoding: r.headers.get('content-encoding'),
        vary: r.headers.get('vary'),
        text: await r.text(),
      }));
    const br = await raw('gzip, deflate, br');
    assert.equal(br.encoding, 'br');
    assert.equal(br.vary, 'accept-encoding');
    assert.equal(br.text, SCRIPT);
    const gzip = await raw('gzip');
    assert.equal(gzip.encoding, 'gzip');
    assert.equal(gzip.text, SCRIPT);
    const identity = await raw('identity');
    assert.equal(identity.encoding, null);
  });

  it('sends the compressed forms the build wrote beside a file, when they decompress to it; never serves them as files', async () => {
    const bytes = (path: string, encoding: string) =>
      new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        get(`${node.url}${path}`, { headers: { 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const br = await bytes('/assets/built-XyZ789.js', 'br');
    assert.equal(br.encoding, 'br');
    assert.deepEqual(br.body, BUILT_BR, 'the build\'s brotli form, byte for byte');
    // The .gz beside it is of another file's content: the server compresses this one itself.
    const gzip = await bytes('/assets/built-XyZ789.js', 'gzip');
    assert.equal(gzip.encoding, 'gzip');
    assert.notDeepEqual(gzip.body, STALE_GZ);
    assert.equal(gunzipSync(gzip.body).toString(), BUILT);
    for (const suffix of ['.br', '.gz']) assert.equal((await bytes(`/assets/built-XyZ789.js${suffix}`, 'identity')).status, 404);
  });

  it('chooses encodings by Accept-Encoding, honouring q=0', () => {
    const both = { br: Buffer.from('b'), gzip: Buffer.from('g') };
    assert.equal(chooseEncoding('gzip, br', both), 'br');
    assert.equal(chooseEncoding('br;q=0, gzip', both), 'gzip');
    assert.equal(chooseEncoding('*', both), 'br');
    assert.equal(chooseEncoding(undefined, both), undefined);
    assert.equal(chooseEncoding('br', { gzip: Buffer.from('g') }), undefined);
  });

  it('redirects the page URL without its slash, keeping the query (VWR parameters)', async () => {
    const response = await fetch(`${node.url}/waiting-room-site?eventId=Sample&publicApiUrl=x`, { redirect: 'manual' });
    assert.equal(response.status, 301);
    assert.equal(response.headers.get('location'), '/waiting-room-site/?eventId=Sample&publicApiUrl=x');
  });

  it('unknown files are the API\'s JSON 404, and HEAD works', async () => {
    const missing = await fetch(`${node.url}/assets/nope.js`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'Not found' });
    const head = await fetch(`${node.url}/waiting-room-site/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });
});

describe('the build (npm run build:web)', () => {
  it('writes a brotli and a gzip form beside every file the server sends compressed, each decompressing to it', () => {
    ensurePagesBuilt();
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]));
    const files = walk(WEB_DIST_DIR).filter((file) => !/\.(br|gz)$/.test(file) && compressible(file, statSync(file).size));
    assert.ok(files.some((file) => file.endsWith('.js')) && files.some((file) => file.endsWith('.html')), files.join(', '));
    for (const file of files) {
      const body = readFileSync(file);
      assert.deepEqual(brotliDecompressSync(readFileSync(`${file}.br`)), body, `${file}.br`);
      assert.deepEqual(gunzipSync(readFileSync(`${file}.gz`)), body, `${file}.gz`);
    }
  });
});

describe('static pages, not built', () => {
  it('answer 503 with the command that builds them', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'anteroom-web-empty-'));
    const node = await startWebNode({}, { root: join(empty, 'dist') });
    try {
      const response = await fetch(`${node.url}/waiting-room-site/`);
      assert.equal(response.status, 503);
      assert.match(await response.text(), /npm run build:web/);
      // The API itself is unaffected.
      assert.equal((await fetch(`${node.url}/serving_num?event_id=Sample`)).status, 200);
    } finally {
      await node.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('page URLs printed by `anteroom serve`', () => {
  it('carry the parameters the pages need when the server differs from their defaults', () => {
    const plain = pageUrls('http://127.0.0.1:8080', { events: [eventSettings('Sample')], privateBasePath: '/private' });
    assert.equal(plain.waitingRoom, 'http://127.0.0.1:8080/waiting-room-site/');
    assert.equal(plain.controlPanel, 'http://127.0.0.1:8080/control-panel/');
    assert.equal(plain.store, 'http://127.0.0.1:8080/store/checkout');
    const custom = pageUrls('https://room.example', { events: [eventSettings('Launch')], privateBasePath: '/admin' });
    assert.equal(custom.waitingRoom, 'https://room.example/waiting-room-site/?eventId=Launch');
    assert.equal(custom.controlPanel, 'https://room.example/control-panel/?eventId=Launch&privateApiUrl=https%3A%2F%2Froom.example%2Fadmin');
  });
});
