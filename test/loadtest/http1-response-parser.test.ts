import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Http1ResponseParser, MAX_HEAD_BYTES, type ParsedResponse } from '../../src/loadtest/http1-response-parser.ts';

/** Feeds `chunks` to a fresh parser; returns the responses, the first error and what end() said. */
function parse(chunks: Buffer[], options: { end?: boolean; accept?: number } = {}) {
  const responses: ParsedResponse[] = [];
  const accept = options.accept ?? Infinity;
  const parser = new Http1ResponseParser((r) => {
    if (responses.length >= accept) return false;
    responses.push(r);
    return true;
  });
  let error: string | null = null;
  for (const chunk of chunks) {
    error = parser.push(chunk);
    if (error !== null) break;
  }
  const endError = options.end && error === null ? parser.end() : null;
  return { responses, error, endError, parser };
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Every way of cutting `data` in two, and byte by byte. */
function splits(data: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i <= data.length; i++) out.push([data.subarray(0, i), data.subarray(i)]);
  out.push([...data].map((b) => Buffer.from([b])));
  return out;
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: 21\r\nConnection: keep-alive\r\n\r\n{"serving_counter":7}';
const CHUNKED =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' + '5;ext=1\r\n{"wai\r\n' + 'C\r\nting_num":42\r\n' + '1\r\n}\r\n' + '0\r\nx-trailer: yes\r\n\r\n';
const NO_CONTENT = 'HTTP/1.1 204 No Content\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\n\r\n';
const INTERIM_THEN_OK = 'HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\n{}';
const THROTTLED = 'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nCONTENT-LENGTH: 0\r\n\r\n';
const UNAVAILABLE = 'HTTP/1.1 503 Service Unavailable\r\nretry-after: Sun, 22 Nov 2026 00:00:00 GMT\r\ncontent-length: 4\r\n\r\nbusy';
const UTF8 = 'HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{"é":"日"}';
const CLOSING = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive, Close\r\n\r\nok';

const STREAM = OK + CHUNKED + NO_CONTENT + INTERIM_THEN_OK + THROTTLED + UNAVAILABLE + UTF8 + CLOSING;
const EXPECTED: ParsedResponse[] = [
  { status: 200, body: '{"serving_counter":7}', retryAfterMs: null, close: false },
  { status: 200, body: '{"waiting_num":42}', retryAfterMs: null, close: false },
  { status: 204, body: '', retryAfterMs: null, close: false },
  { status: 202, body: '{}', retryAfterMs: null, close: false },
  { status: 429, body: '', retryAfterMs: 3000, close: false },
  { status: 503, body: 'busy', retryAfterMs: null, close: false },
  { status: 200, body: '{"é":"日"}', retryAfterMs: null, close: false },
  { status: 200, body: 'ok', retryAfterMs: null, close: true },
];

describe('HTTP/1.1 response parser', () => {
  it('several responses in one chunk: Content-Length, chunked with extensions and trailers, 204, 1xx, Retry-After, close', () => {
    const { responses, error, endError } = parse([bytes(STREAM)], { end: true });
    assert.equal(error, null);
    assert.equal(endError, null);
    assert.deepEqual(responses, EXPECTED);
  });

  it('the same stream split at every byte boundary, and byte by byte, gives the same responses', () => {
    for (const chunks of splits(bytes(STREAM))) {
      const { responses, error } = parse(chunks);
      assert.equal(error, null, `split ${chunks[0]!.length}`);
      assert.deepEqual(responses, EXPECTED, `split ${chunks[0]!.length}`);
    }
  });

  it('does not keep views of the caller\'s buffers across chunks (a reused read buffer cannot corrupt a body)', () => {
    const data = bytes(OK + CHUNKED);
    const responses: ParsedResponse[] = [];
    const parser = new Http1ResponseParser((r) => (responses.push(r), true));
    const scratch = Buffer.alloc(1);
    for (const b of data) {
      scratch[0] = b;
      assert.equal(parser.push(scratch), null);
    }
    assert.deepEqual(responses, EXPECTED.slice(0, 2));
  });

  it('HTTP/1.0: closes unless keep-alive; no length means the body runs to the end of the connection', () => {
    assert.deepEqual(parse([bytes('HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\na')]).responses, [{ status: 200, body: 'a', retryAfterMs: null, close: true }]);
    assert.deepEqual(parse([bytes('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\na')]).responses, [
      { status: 200, body: 'a', retryAfterMs: null, close: false },
    ]);
    // `close` wins over `keep-alive`, in one header or two, whatever the order.
    for (const head of ['Connection: close, keep-alive\r\n', 'Connection: keep-alive\r\nConnection: close\r\n', 'Connection: close\r\nConnection: keep-alive\r\n']) {
      for (const version of ['1.0', '1.1']) {
        const { responses } = parse([bytes(`HTTP/${version} 200 OK\r\n${head}Content-Length: 1\r\n\r\na`)]);
        assert.equal(responses[0]?.close, true, `HTTP/${version} ${head}`);
      }
    }
    for (const chunks of splits(bytes('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end'))) {
      const { responses, error, endError } = parse(chunks, { end: true });
      assert.equal(error, null);
      assert.equal(endError, null);
      assert.deepEqual(responses, [{ status: 200, body: 'until the end', retryAfterMs: null, close: true }]);
    }
  });

  it('nothing may follow the response of a closing connection', () => {
    const { responses, error } = parse([bytes(CLOSING + OK)]);
    assert.equal(responses.length, 1);
    assert.match(error ?? '', /after the last response/);
  });

  it('malformed or unframeable responses are errors, never guesses', () => {
    const bad: Array<[string, RegExp]> = [
      ['HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n', /malformed status line/],
      ['<html>hello</html>\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /malformed header line/],
      ['HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok', /malformed header line/],
      ['HTTP/1.1 200 OK\r\nX-Long: one\r\n  folded\r\nContent-Length: 0\r\n\r\n', /malformed header line/],
      ['HTTP/1.1 200 OK\r\nX-Long: one\r\n\tfolded: 2\r\nContent-Length: 0\r\n\r\n', /malformed header line/],
      ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /invalid Content-Length/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n', /invalid Content-Length/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', /conflicting Content-Length/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n', /both Transfer-Encoding and Content-Length/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n', /unsupported Transfer-Encoding/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n', /not followed by CRLF/],
      ['HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', /101/],
      [`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`, /head longer than/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n', /body over/],
    ];
    for (const [text, message] of bad) {
      const { responses, error } = parse([bytes(text)]);
      assert.deepEqual(responses, [], text.slice(0, 40));
      assert.match(error ?? '', message, text.slice(0, 40));
    }
  });

  it('an error is final: later bytes are refused, even a valid response', () => {
    const { parser } = parse([bytes('HTTP/1.1 20 OK\r\n\r\n')]);
    assert.match(parser.push(bytes(OK)) ?? '', /malformed status line/);
  });

  it('a response nobody asked for is an error (the caller has no request in flight)', () => {
    const { responses, error } = parse([bytes(OK + OK)], { accept: 1 });
    assert.equal(responses.length, 1);
    assert.match(error ?? '', /arrived for no request/);
  });

  it('a connection that ends in the middle of a response is an error; between responses it is not', () => {
    const data = bytes(OK + CHUNKED);
    for (let cut = 1; cut < data.length; cut++) {
      const { responses, endError } = parse([data.subarray(0, cut)], { end: true });
      const complete = cut === Buffer.byteLength(OK) ? 1 : cut === data.length ? 2 : null;
      if (complete !== null) {
        assert.equal(endError, null, `cut at ${cut}`);
        assert.equal(responses.length, complete);
      } else {
        assert.match(endError ?? '', /middle of a response/, `cut at ${cut}`);
      }
    }
  });
});
