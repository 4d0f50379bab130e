// Verifies AWS Signature Version 4 on private requests, as sent by VWR's control panel (aws4fetch) and its
// inlet strategies (botocore). The expected signature is computed by AWS's own signer
// (@smithy/signature-v4) over exactly the headers the client says it signed, then compared in constant
// time. The payload hash is always computed from the body we received: a client-supplied
// X-Amz-Content-Sha256 must equal it (the signer would otherwise trust the header).

import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { secretsEqual } from './constant-time.ts';
import { NodeSha256 } from './sha256.ts';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** When set, only this region is accepted in the credential scope; otherwise any. */
  region?: string | undefined;
}

export interface SignedRequest {
  method: string;
  /** Path as sent on the wire (still percent-encoded), without the query string. */
  path: string;
  /** Raw query string without '?'. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export type SigV4Verdict = { ok: true } | { ok: false; reason: string };

const SERVICE = 'execute-api';
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTH_PATTERN =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

function header(headers: SignedRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function parseAmzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? null : ms;
}

function parseQuery(raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const existing = query[key];
    if (existing === undefined) query[key] = value;
    else query[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}

/** True when the request carries SigV4 credentials at all (as opposed to none or a bearer token). */
export function looksLikeSigV4(authorization: string | undefined): boolean {
  return authorization?.startsWith('AWS4-HMAC-SHA256 ') ?? false;
}

export async function verifySigV4(req: SignedRequest, creds: SigV4Credentials, nowMs: number): Promise<SigV4Verdict> {
  const authorization = header(req.headers, 'authorization') ?? '';
  const m = AUTH_PATTERN.exec(authorization);
  if (!m) return { ok: false, reason: 'malformed authorization header' };
  const [, accessKeyId, scopeDate, region, service, signedHeaderList, signature] = m as unknown as string[];
  if (!secretsEqual(accessKeyId!, creds.accessKeyId)) return { ok: false, reason: 'unknown access key' };
  if (service !== SERVICE) return { ok: false, reason: 'wrong service in scope' };
  if (creds.region && region !== creds.region) return { ok: false, reason: 'wrong region in scope' };

  const amzDate = header(req.headers, 'x-amz-date');
  const signedAt = amzDate ? parseAmzDate(amzDate) : null;
  if (signedAt === null || !amzDate) return { ok: false, reason: 'missing or malformed x-amz-date' };
  if (!amzDate.startsWith(scopeDate!)) return { ok: false, reason: 'scope date differs from x-amz-date' };
  if (Math.abs(nowMs - signedAt) > MAX_SKEW_MS) return { ok: false, reason: 'request date out of range' };

  const signedHeaders = signedHeaderList!.split(';');
  if (!signedHeaders.includes('host')) return { ok: false, reason: 'host is not signed' };
  const bodyHash = createHash('sha256').update(req.body).digest('hex');
  const claimedHash = header(req.headers, 'x-amz-content-sha256');
  if (claimedHash !== undefined && claimedHash !== bodyHash) return { ok: false, reason: 'payload hash mismatch' };

  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = header(req.headers, name);
    if (value === undefined) return { ok: false, reason: `signed header ${name} is missing` };
    headers[name] = value;
  }
  const host = headers.host as string;
  const signer = new SignatureV4({
    service: SERVICE,
    region: region!,
    credentials: { accessKeyId: accessKeyId!, secretAccessKey: creds.secretAccessKey },
    sha256: NodeSha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: host.replace(/:\d+$/, ''),
      path: req.path,
      query: parseQuery(req.query),
      headers,
      body: req.body.length > 0 ? req.body : undefined,
    },
    { signingDate: new Date(signedAt), signableHeaders: new Set(signedHeaders) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1] ?? '';
  const expectedList = /SignedHeaders=([^,]+)/.exec(String(signed.headers.authorization))?.[1] ?? '';
  if (expectedList !== signedHeaderList) return { ok: false, reason: 'signed header list differs' };
  return secretsEqual(signature!, expected) ? { ok: true } : { ok: false, reason: 'signature mismatch' };
}
