// node:crypto SHA-256 (HMAC when constructed with a secret) behind the hash interface AWS's SigV4 signer
// expects. Used by the server to verify signatures (the clients sign with WebCrypto: src/client).

import { createHash, createHmac } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;

function toBytes(data: SourceData): Uint8Array | string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export class NodeSha256 {
  private readonly secret: Uint8Array | string | undefined;
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : toBytes(secret);
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: SourceData): void {
    this.hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    this.hash = this.fresh();
  }
}
