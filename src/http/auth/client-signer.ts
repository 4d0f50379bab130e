// Client side of private-API authentication (load test, inlet strategies): the admin bearer token, or AWS Signature Version 4 computed by AWS's
// own signer (@smithy/signature-v4, service execute-api) — what VWR's inlet strategies send.

import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from './sha256.ts';

/** How a client authenticates to the private API. */
export type PrivateAuth =
  | { kind: 'bearer'; token: string }
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; region: string; sessionToken?: string | undefined };

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
    sha256: NodeSha256,
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
