// An incremental parser of HTTP/1.1 responses on one keep-alive connection, for the load tester's pipelined
// polls (src/loadtest/poll-connections.ts). It frames what a real deployment may send a GET: a status line,
// headers, then a body delimited by Content-Length, by chunked transfer-encoding (extensions and trailers
// skipped) or by the end of the connection; 1xx interim responses are skipped, 204/304 have no body. It
// reports `Connection: close` (or an HTTP/1.0 answer without keep-alive) and Retry-After on 429/503.
//
// Anything it cannot frame with certainty — a malformed status line or header, an invalid or conflicting
// Content-Length, Transfer-Encoding other than `chunked`, a bad chunk, a head or body over the limits — is an
// error: the caller must close the connection, since no later byte on it can be attributed to a request.

/** A complete final (non-1xx) response. */
export interface ParsedResponse {
  status: number;
  body: string;
  /** Retry-After in milliseconds (delay-seconds form) on 429/503, else null. */
  retryAfterMs: number | null;
  /** The server closes the connection after this response: nothing more will be answered on it. */
  close: boolean;
}

/** Return false when no request is waiting for this response (the connection is then in error). */
export type ResponseSink = (response: ParsedResponse) => boolean;

/** end()'s answer when the connection closed with a response begun and not complete: a network error, not a framing one. */
export const CUT_SHORT = 'connection closed in the middle of a response';

export const MAX_HEAD_BYTES = 16 * 1024;
export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_CHUNK_LINE = 1024;

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

const HEAD = 0;
const BODY_LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_DATA_END = 4;
const TRAILERS = 5;
const BODY_UNTIL_CLOSE = 6;
/** After a response that closes the connection, or after an error: nothing more is accepted. */
const DONE = 7;

export class Http1ResponseParser {
  private state = HEAD;
  /** Unconsumed bytes of a head or a chunk line split across chunks. */
  private leftover: Buffer | null = null;
  private status = 0;
  private retryAfterMs: number | null = null;
  private close = false;
  /** Body bytes still expected (Content-Length or current chunk). */
  private remaining = 0;
  private bodyBytes = 0;
  /** Body parts when the body spans chunks (copied: the caller may reuse its buffers). */
  private parts: Buffer[] | null = null;
  /** The body when it lies whole in one chunk (the common case): no copy. */
  private single: Buffer | null = null;
  private readonly sink: ResponseSink;
  /** The first error, once one occurred. */
  error: string | null = null;

  constructor(sink: ResponseSink) {
    this.sink = sink;
  }

  /** Some bytes of a response have arrived and the response is not complete. */
  private get midResponse(): boolean {
    if (this.state === HEAD) return this.leftover !== null;
    return this.state !== DONE;
  }

  /** Feeds bytes from the connection. Returns an error message when the stream cannot be framed, else null. */
  push(chunk: Buffer): string | null {
    if (this.error !== null) return this.error;
    if (this.state === DONE) return chunk.length === 0 ? null : this.fail('bytes after the last response of a closing connection');
    let buf = chunk;
    if (this.leftover !== null) {
      buf = Buffer.concat([this.leftover, chunk]);
      this.leftover = null;
    }
    const result = this.consume(buf);
    // A body that continues in the next chunk: keep a copy of what arrived, not a view of the caller's buffer.
    if (this.single !== null) {
      this.parts = [Buffer.from(this.single)];
      this.single = null;
    }
    if (this.leftover !== null) this.leftover = Buffer.from(this.leftover);
    return result;
  }

  private consume(buf: Buffer): string | null {
    let pos = 0;
    const end = buf.length;
    while (pos < end) {
      switch (this.state) {
        case HEAD: {
          const at = buf.indexOf(HEAD_END, pos);
          if (at < 0) {
            if (end - pos > MAX_HEAD_BYTES) return this.fail(`response head longer than ${MAX_HEAD_BYTES} bytes`);
            this.leftover = buf.subarray(pos);
            return null;
          }
          if (at - pos > MAX_HEAD_BYTES) return this.fail(`response head longer than ${MAX_HEAD_BYTES} bytes`);
          const problem = this.head(buf.toString('latin1', pos, at));
          if (problem !== null) return this.fail(problem);
          pos = at + 4;
          break;
        }
        case BODY_LENGTH: {
          const take = Math.min(this.remaining, end - pos);
          this.body(buf, pos, pos + take);
          pos += take;
          this.remaining -= take;
          if (this.remaining === 0 && !this.emit()) return this.error;
          break;
        }
        case CHUNK_SIZE: {
          const at = buf.indexOf(CRLF, pos);
          if (at < 0) {
            if (end - pos > MAX_CHUNK_LINE) return this.fail('chunk size line too long');
            this.leftover = buf.subarray(pos);
            return null;
          }
          const line = buf.toString('latin1', pos, at);
          const semi = line.indexOf(';');
          const hex = (semi < 0 ? line : line.slice(0, semi)).trimEnd();
          if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) return this.fail(`bad chunk size "${line.slice(0, 40)}"`);
          const size = parseInt(hex, 16);
          pos = at + 2;
          if (size === 0) {
            this.state = TRAILERS;
          } else {
            if (this.bodyBytes + size > MAX_BODY_BYTES) return this.fail(`response body over ${MAX_BODY_BYTES} bytes`);
            this.remaining = size;
            this.state = CHUNK_DATA;
          }
          break;
        }
        case CHUNK_DATA: {
          const take = Math.min(this.remaining, end - pos);
          this.body(buf, pos, pos + take);
          pos += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = CHUNK_DATA_END;
          break;
        }
        case CHUNK_DATA_END: {
          // The CRLF after a chunk's data; it may itself be split across chunks.
          if (end - pos < 2) {
            if (buf[pos] !== 13) return this.fail('chunk data not followed by CRLF');
            this.leftover = buf.subarray(pos);
            return null;
          }
          if (buf[pos] !== 13 || buf[pos + 1] !== 10) return this.fail('chunk data not followed by CRLF');
          pos += 2;
          this.state = CHUNK_SIZE;
          break;
        }
        case TRAILERS: {
          const at = buf.indexOf(CRLF, pos);
          if (at < 0) {
            if (end - pos > MAX_HEAD_BYTES) return this.fail('trailer section too long');
            this.leftover = buf.subarray(pos);
            return null;
          }
          const empty = at === pos;
          pos = at + 2;
          if (empty && !this.emit()) return this.error;
          break;
        }
        case BODY_UNTIL_CLOSE: {
          if (this.bodyBytes + (end - pos) > MAX_BODY_BYTES) return this.fail(`response body over ${MAX_BODY_BYTES} bytes`);
          this.body(buf, pos, end);
          pos = end;
          break;
        }
        default:
          return this.fail('bytes after the last response of a closing connection');
      }
    }
    return null;
  }

  /**
   * The server closed the connection. Completes a body delimited by the close; returns an error message when a
   * response was cut short (the caller fails that request), else null.
   */
  end(): string | null {
    if (this.error !== null) return this.error;
    if (this.state === BODY_UNTIL_CLOSE) {
      this.emit();
      return this.error;
    }
    if (this.midResponse) return this.fail(CUT_SHORT);
    this.state = DONE;
    return null;
  }

  private fail(message: string): string {
    this.error = message;
    this.state = DONE;
    this.leftover = null;
    this.parts = null;
    this.single = null;
    return message;
  }

  /** Parses a response head (status line and header lines, without the final CRLFCRLF) and sets the framing. */
  private head(text: string): string | null {
    // Status line: HTTP/1.x SP 3DIGIT [SP reason]
    const lineEnd = text.indexOf('\r\n');
    const statusLine = lineEnd < 0 ? text : text.slice(0, lineEnd);
    if (
      statusLine.length < 12 ||
      !statusLine.startsWith('HTTP/1.') ||
      (statusLine[7] !== '1' && statusLine[7] !== '0') ||
      statusLine[8] !== ' ' ||
      (statusLine.length > 12 && statusLine[12] !== ' ')
    ) {
      return `malformed status line "${statusLine.slice(0, 60)}"`;
    }
    const status = Number(statusLine.slice(9, 12));
    if (!Number.isInteger(status) || status < 100 || status > 599 || !/^\d{3}$/.test(statusLine.slice(9, 12))) {
      return `malformed status line "${statusLine.slice(0, 60)}"`;
    }
    const http10 = statusLine[7] === '0';
    let contentLength = -1;
    let chunked = false;
    let closeToken = false;
    let keepAliveToken = false;
    let retryAfter: string | null = null;
    let from = lineEnd < 0 ? text.length : lineEnd + 2;
    while (from < text.length) {
      let to = text.indexOf('\r\n', from);
      if (to < 0) to = text.length;
      const colon = text.indexOf(':', from);
      // No colon, an empty name, or a line folded onto the previous one (obs-fold, RFC 9112 §5.2): malformed.
      const firstChar = text.charCodeAt(from);
      if (colon < 0 || colon >= to || colon === from || firstChar === 32 || firstChar === 9) return `malformed header line "${text.slice(from, Math.min(to, from + 60))}"`;
      const nameLength = colon - from;
      const last = text.charCodeAt(colon - 1);
      if (last === 32 || last === 9) return `malformed header line "${text.slice(from, Math.min(to, from + 60))}"`;
      // Only four headers matter: Content-Length, Connection, Transfer-Encoding, Retry-After. Compare the
      // length and first letter before lower-casing a candidate's name.
      const first = text.charCodeAt(from) | 0x20;
      if (
        (first === 99 && (nameLength === 14 || nameLength === 10)) ||
        (first === 116 && nameLength === 17) ||
        (first === 114 && nameLength === 11)
      ) {
        const name = text.slice(from, colon).toLowerCase();
        const value = text.slice(colon + 1, to).trim();
        if (name === 'content-length') {
          if (!/^\d{1,15}$/.test(value)) return `invalid Content-Length "${value.slice(0, 40)}"`;
          const n = Number(value);
          if (contentLength >= 0 && contentLength !== n) return 'conflicting Content-Length headers';
          contentLength = n;
        } else if (name === 'transfer-encoding') {
          const codings = value.toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '');
          if (chunked || codings.length !== 1 || codings[0] !== 'chunked') return `unsupported Transfer-Encoding "${value.slice(0, 40)}"`;
          chunked = true;
        } else if (name === 'connection') {
          for (const token of value.toLowerCase().split(',')) {
            const t = token.trim();
            if (t === 'close') closeToken = true;
            else if (t === 'keep-alive') keepAliveToken = true;
          }
        } else if (name === 'retry-after') {
          retryAfter = value;
        }
      }
      from = to + 2;
    }

    if (status < 200) {
      // 1xx: an interim response, no body; the final response follows. 101 would change the protocol.
      if (status === 101) return 'unexpected 101 Switching Protocols';
      this.state = HEAD;
      return null;
    }
    if (chunked && contentLength >= 0) return 'both Transfer-Encoding and Content-Length';
    this.status = status;
    // `close` wins over `keep-alive`, whatever their order; HTTP/1.0 closes unless it asks to keep alive.
    this.close = closeToken || (http10 && !keepAliveToken);
    this.retryAfterMs = (status === 429 || status === 503) && retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : null;
    this.bodyBytes = 0;
    if (status === 204 || status === 304) {
      this.emit();
    } else if (chunked) {
      this.state = CHUNK_SIZE;
    } else if (contentLength >= 0) {
      if (contentLength > MAX_BODY_BYTES) return `response body over ${MAX_BODY_BYTES} bytes`;
      this.remaining = contentLength;
      this.state = BODY_LENGTH;
      if (contentLength === 0) this.emit();
    } else {
      // No length: the body runs to the end of the connection, which therefore closes after it.
      this.close = true;
      this.state = BODY_UNTIL_CLOSE;
    }
    return this.error;
  }

  private body(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    this.bodyBytes += to - from;
    if (this.parts === null && this.single === null) {
      this.single = buf.subarray(from, to);
      return;
    }
    if (this.parts === null) this.parts = [Buffer.from(this.single!)];
    this.single = null;
    this.parts.push(Buffer.from(buf.subarray(from, to)));
  }

  /** Hands a complete response to the sink; false when the connection is in error afterwards. */
  private emit(): boolean {
    const body = this.parts !== null ? Buffer.concat(this.parts).toString('utf8') : this.single !== null ? this.single.toString('utf8') : '';
    this.parts = null;
    this.single = null;
    const response: ParsedResponse = { status: this.status, body, retryAfterMs: this.retryAfterMs, close: this.close };
    this.state = this.close ? DONE : HEAD;
    if (!this.sink(response)) {
      this.fail(`a ${this.status} response arrived for no request`);
      return false;
    }
    return true;
  }
}
