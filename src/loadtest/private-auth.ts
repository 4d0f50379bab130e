// Credentials on private-API calls: the admin bearer token, or AWS Signature Version 4 computed by AWS's
// own signer (@smithy/signature-v4, service execute-api) — what VWR's inlet strategies send.

import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { PrivateAuth } from './options.ts';

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytes(data: SourceData): Uint8Array | string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** node:crypto SHA-256 (HMAC when given a secret) behind the interface the signer expects. */
class Sha256 {
  private readonly secret: Uint8Array | string | undefined;
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytes(secret);
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

export interface PrivateCall {
  method: 'GET' | 'POST';
  /** host[:port] exactly as sent in the Host header. */
  host: string;
  /** Full path as sent, including the private prefix, without the query. */
  path: string;
  query?: Record<string, string>;
  body?: string;
}

export type PrivateSigner = (call: PrivateCall) => Promise<Record<string, string>>;

/** Returns a function giving the headers that authenticate one private call. */
export function privateSigner(auth: PrivateAuth): PrivateSigner {
  if (auth.kind === 'bearer') {
    const headers = { authorization: `Bearer ${auth.token}` };
    return async () => headers;
  }
  const signer = new SignatureV4({
    service: 'execute-api',
    region: auth.region,
    credentials: {
      accessKeyId: auth.accessKeyId,
      secretAccessKey: auth.secretAccessKey,
      ...(auth.sessionToken ? { sessionToken: auth.sessionToken } : {}),
    },
    sha256: Sha256,
  });
  return async (call) => {
    const headers: Record<string, string> = { host: call.host };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const signed = await signer.sign({
      method: call.method,
      protocol: 'http:',
      hostname: call.host.replace(/:\d+$/, ''),
      path: call.path,
      query: call.query ?? {},
      headers,
      body: call.body,
    });
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      // undici derives Host from the URL (the value signed above); content-type is added by the client.
      if (name.toLowerCase() !== 'host' && name.toLowerCase() !== 'content-type') out[name] = String(value);
    }
    return out;
  };
}
