// A gzip body made of fixed text compressed once and short values that change per request (the gate's waiting
// page with a visitor's numbers in it, src/web/gate-page.ts), without compressing anything per request.
//
// One gzip member (RFC 1952) holds one deflate stream (RFC 1951), and a deflate stream is a run of blocks. Each
// fixed piece is deflated once on its own and ended with a sync flush (non-final blocks, byte-aligned, with no
// reference beyond the piece); a value goes between two pieces as a non-final stored block (uncompressed); the
// last piece ends the stream. Only the CRC-32 of the whole text and its length are computed per request.

import { constants, crc32, deflateRawSync } from 'node:zlib';

/** ID1 ID2, deflate, no flags, no time, no extra flags, unknown OS. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** A stored block holds at most this many bytes. */
const STORED_MAX = 0xffff;

export class SplicedGzip {
  private readonly texts: Buffer[];
  private readonly deflated: Buffer[];

  /** `texts`: the fixed pieces, one more than the values that go between them. */
  constructor(texts: readonly string[]) {
    if (texts.length === 0) throw new Error('SplicedGzip needs at least one piece');
    this.texts = texts.map((text) => Buffer.from(text));
    this.deflated = this.texts.map((text, i) =>
      deflateRawSync(text, { level: 9, ...(i < this.texts.length - 1 ? { finishFlush: constants.Z_SYNC_FLUSH } : {}) }),
    );
  }

  /** The whole text with `values` between the pieces, as is and gzipped. */
  fill(values: readonly string[]): { body: Buffer; gzip: Buffer } {
    if (values.length !== this.texts.length - 1) throw new Error(`SplicedGzip needs ${this.texts.length - 1} values, got ${values.length}`);
    const plain: Buffer[] = [];
    const packed: Buffer[] = [GZIP_HEADER];
    for (let i = 0; i < this.texts.length; i++) {
      plain.push(this.texts[i]!);
      packed.push(this.deflated[i]!);
      if (i < values.length) {
        const value = Buffer.from(values[i]!);
        plain.push(value);
        packed.push(...storedBlocks(value));
      }
    }
    const body = Buffer.concat(plain);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc32(body), 0);
    trailer.writeUInt32LE(body.length % 2 ** 32, 4);
    packed.push(trailer);
    return { body, gzip: Buffer.concat(packed) };
  }
}

/** Non-final stored blocks holding `data` (the stream is byte-aligned before each: a sync flush or a stored block). */
function storedBlocks(data: Buffer): Buffer[] {
  const blocks: Buffer[] = [];
  for (let at = 0; at < data.length; at += STORED_MAX) {
    const chunk = data.subarray(at, at + STORED_MAX);
    const header = Buffer.alloc(5);
    header[0] = 0; // BFINAL 0, BTYPE 00 (stored), then padding to the byte
    header.writeUInt16LE(chunk.length, 1);
    header.writeUInt16LE(~chunk.length & 0xffff, 3);
    blocks.push(header, chunk);
  }
  return blocks;
}
