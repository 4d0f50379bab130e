// Private-API authentication alone (src/http/auth): the SigV4 verifier against signatures made by AWS's own
// signer, each refusal with its reason; the hook's 401/403 decisions; the client signer round trip; the
// constant-time comparison and the SHA-256 adapter. No server: requests are plain objects.

import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FastifyRequest } from 'fastify';
import { ContractError } from '../../src/domain/errors.ts';
import { secretMatcher, secretsEqual } from '../../src/http/auth/constant-time.ts';
import { privateAuthHook, privateCaller } from '../../src/http/auth/private-auth.ts';
import { NodeSha256 } from '../../src/http/auth/sha256.ts';
import { looksLikeSigV4, verifySigV4, type SignedRequest, type SigV4Credentials } from '../../src/http/auth/sigv4.ts';

const CREDS: SigV4Credentials = { accessKeyId: 'AKARTESTKEY000000001', secretAccessKey: 'secret-access-key-0123456789abcdef' };
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const HOST = 'waiting.example:8080';

interface SignOptions {
  method?: string;
  path?: string;
  query?: Record<string, string | string[]>;
  body?: string;
  region?: string;
  service?: string;
  secretAccessKey?: string;
  accessKeyId?: string;
  at?: number;
  /** Adds X-Amz-Content-Sha256 with this value (botocore sends the body's hash). */
  contentSha?: string;
  /** More headers to sign. */
  extra?: Record<string, string>;
}

/** A request signed by @smithy/signature-v4 (what botocore-style clients send), as the server receives it. */
async function signedRequest(o: SignOptions = {}): Promise<SignedRequest> {
  const signer = new SignatureV4({
    service: o.service ?? 'execute-api',
    region: o.region ?? 'eu-west-1',
    credentials: { accessKeyId: o.accessKeyId ?? CREDS.accessKeyId, secretAccessKey: o.secretAccessKey ?? CREDS.secretAccessKey },
    sha256: NodeSha256,
    applyChecksum: false,
  });
  const headers: Record<string, string> = { host: HOST };
  if (o.contentSha !== undefined) headers['x-amz-content-sha256'] = o.contentSha;
  Object.assign(headers, o.extra);
  const signed = await signer.sign(
    {
      method: o.method ?? 'GET',
      protocol: 'http:',
      hostname: 'waiting.example',
      path: o.path ?? '/private/num_active_tokens',
      query: o.query ?? { event_id: 'Sample' },
      headers,
      body: o.body,
    },
    { signingDate: new Date(o.at ?? NOW) },
  );
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(o.query ?? { event_id: 'Sample' })) {
    for (const v of Array.isArray(value) ? value : [value]) query.append(key, v);
  }
  const wire: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) wire[name.toLowerCase()] = String(value);
  return { method: o.method ?? 'GET', path: o.path ?? '/private/num_active_tokens', query: query.toString(), headers: wire, body: Buffer.from(o.body ?? '') };
}

const refusal = async (request: SignedRequest, creds: SigV4Credentials = CREDS, now = NOW) => {
  const verdict = await verifySigV4(request, creds, now);
  return verdict.ok ? 'accepted' : verdict.reason;
};

describe('SigV4 verification', () => {
  it('accepts what AWS\'s signer signs: a GET with a query (repeated keys too), a POST with its body', async () => {
    assert.equal(await refusal(await signedRequest()), 'accepted');
    assert.equal(await refusal(await signedRequest({ query: { event_id: 'Sample', a: ['1', '2', '3'] } })), 'accepted');
    const body = '{"event_id":"Sample","increment_by":1}';
    assert.equal(await refusal(await signedRequest({ method: 'POST', path: '/private/increment_serving_counter', query: {}, body })), 'accepted');
    const hash = createHash('sha256').update(body).digest('hex');
    assert.equal(await refusal(await signedRequest({ method: 'POST', query: {}, body, contentSha: hash })), 'accepted');
  });

  it('refuses, with its reason, each thing that does not match', async () => {
    const good = await signedRequest();
    const withHeader = (name: string, value: string | undefined): SignedRequest => ({ ...good, headers: { ...good.headers, [name]: value } });
    const authorization = String(good.headers.authorization);
    assert.equal(await refusal(withHeader('authorization', undefined)), 'malformed authorization header');
    assert.equal(await refusal(withHeader('authorization', authorization.replace('Signature=', 'Signature=x'))), 'malformed authorization header');
    assert.equal(await refusal(await signedRequest({ accessKeyId: 'AKARTESTKEY000000002' })), 'unknown access key');
    assert.equal(await refusal(await signedRequest({ service: 'lambda' })), 'wrong service in scope');
    assert.equal(await refusal(await signedRequest({ secretAccessKey: 'another-secret-0123456789abcdef' })), 'signature mismatch');
    assert.equal(await refusal({ ...good, path: '/private/expired_tokens' }), 'signature mismatch');
    assert.equal(await refusal({ ...good, query: 'event_id=Other' }), 'signature mismatch');
    assert.equal(await refusal({ ...good, method: 'POST' }), 'signature mismatch');
    assert.equal(await refusal(withHeader('host', 'other.example:8080')), 'signature mismatch');
    assert.equal(await refusal(withHeader('x-amz-date', undefined)), 'missing or malformed x-amz-date');
    assert.equal(await refusal(withHeader('x-amz-date', '20261122T120000')), 'missing or malformed x-amz-date');
    assert.equal(await refusal(withHeader('x-amz-date', '20261123T120000Z')), 'scope date differs from x-amz-date');
    const unsignedHost = authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=x-amz-date');
    assert.equal(await refusal(withHeader('authorization', unsignedHost)), 'host is not signed');
    const extra = authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=host;x-amz-date;x-extra');
    assert.equal(await refusal(withHeader('authorization', extra)), 'signed header x-extra is missing');
    const reordered = authorization.replace('SignedHeaders=host;x-amz-date', 'SignedHeaders=x-amz-date;host');
    assert.equal(await refusal(withHeader('authorization', reordered)), 'signed header list differs');
  });

  it('reads the authorization header strictly: nothing before or after it; blanks after its commas optional', async () => {
    const good = await signedRequest();
    const authorization = String(good.headers.authorization);
    const withAuthorization = (value: string): SignedRequest => ({ ...good, headers: { ...good.headers, authorization: value } });
    assert.equal(await refusal(withAuthorization(`x${authorization}`)), 'malformed authorization header');
    assert.equal(await refusal(withAuthorization(`${authorization} extra`)), 'malformed authorization header');
    assert.equal(await refusal(withAuthorization(authorization.replaceAll(', ', ','))), 'accepted');
    assert.equal(await refusal(withAuthorization(authorization.replaceAll(', ', ',  '))), 'accepted');
  });

  it('reads x-amz-date strictly: nothing before or after the timestamp', async () => {
    const good = await signedRequest();
    const date = String(good.headers['x-amz-date']);
    for (const value of [`x${date}`, `${date}x`]) {
      assert.equal(await refusal({ ...good, headers: { ...good.headers, 'x-amz-date': value } }), 'missing or malformed x-amz-date', value);
    }
  });

  it('a signed header received more than once is verified as its values joined by commas', async () => {
    const signed = await signedRequest({ extra: { 'x-forwarded-for': '10.0.0.1,10.0.0.2' } });
    assert.match(String(signed.headers.authorization), /SignedHeaders=host;x-amz-date;x-forwarded-for,/);
    const repeated = { ...signed, headers: { ...signed.headers, 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'] } };
    assert.equal(await refusal(repeated), 'accepted');
    assert.equal(await refusal({ ...signed, headers: { ...signed.headers, 'x-forwarded-for': ['10.0.0.1'] } }), 'signature mismatch');
  });

  it('refuses a body that is not the one signed, and a claimed payload hash that is not the body\'s', async () => {
    const body = '{"event_id":"Sample","increment_by":1}';
    const post = await signedRequest({ method: 'POST', query: {}, body });
    assert.equal(await refusal({ ...post, body: Buffer.from('{"event_id":"Sample","increment_by":1000}') }), 'signature mismatch');
    const claimed = await signedRequest({ method: 'POST', query: {}, body, contentSha: createHash('sha256').update('other').digest('hex') });
    assert.equal(await refusal(claimed), 'payload hash mismatch');
    assert.equal(await refusal(await signedRequest({ method: 'POST', query: {}, body, contentSha: 'UNSIGNED-PAYLOAD' })), 'payload hash mismatch');
  });

  it('accepts a date up to 15 minutes away from now, either way, and no further', async () => {
    const minute = 60_000;
    const request = await signedRequest();
    assert.equal(await refusal(request, CREDS, NOW + 15 * minute), 'accepted');
    assert.equal(await refusal(request, CREDS, NOW - 15 * minute), 'accepted');
    assert.equal(await refusal(request, CREDS, NOW + 15 * minute + 1000), 'request date out of range');
    assert.equal(await refusal(request, CREDS, NOW - 15 * minute - 1000), 'request date out of range');
    // Every field of x-amz-date counts, minutes and seconds too: signed at 12:34:56, checked at 12:34:56 ± 15 min.
    const at = Date.UTC(2026, 10, 22, 12, 34, 56);
    const late = await signedRequest({ at });
    assert.equal(await refusal(late, CREDS, at + 15 * minute), 'accepted');
    assert.equal(await refusal(late, CREDS, at - 15 * minute), 'accepted');
    assert.equal(await refusal(late, CREDS, at + 15 * minute + 1000), 'request date out of range');
  });

  it('accepts any region unless one is configured', async () => {
    const elsewhere = await signedRequest({ region: 'ap-southeast-2' });
    assert.equal(await refusal(elsewhere), 'accepted');
    assert.equal(await refusal(elsewhere, { ...CREDS, region: 'eu-west-1' }), 'wrong region in scope');
    assert.equal(await refusal(await signedRequest({ region: 'eu-west-1' }), { ...CREDS, region: 'eu-west-1' }), 'accepted');
  });

  it('tells SigV4 credentials from none and from a bearer token', () => {
    assert.equal(looksLikeSigV4('AWS4-HMAC-SHA256 Credential=x'), true);
    assert.equal(looksLikeSigV4('Bearer AWS4-HMAC-SHA256 '), false);
    assert.equal(looksLikeSigV4('AWS4-HMAC-SHA256'), false);
    assert.equal(looksLikeSigV4(undefined), false);
  });
});

/** What the hook sees of a request, and what it logged. */
function fakeRequest(method: string, headers: Record<string, string>, url = '/private/num_active_tokens?event_id=Sample', body?: Buffer) {
  const logged: unknown[] = [];
  const request = { method, headers, raw: { url }, body, log: { info: (entry: unknown, message: string) => logged.push(entry, message) } };
  return { request: request as unknown as FastifyRequest, logged };
}

const outcome = async (hook: ReturnType<typeof privateAuthHook>, request: FastifyRequest) => {
  try {
    await hook(request);
    return 'allowed';
  } catch (error) {
    assert.ok(error instanceof ContractError);
    return `${error.status} ${error.message}`;
  }
};

describe('the private API authentication hook', () => {
  const hook = privateAuthHook({ adminToken: 'admin-token-0123456789', sigv4: CREDS }, () => NOW);

  it('lets preflights through, answers 401 without credentials and 403 with wrong ones', async () => {
    assert.equal(await outcome(hook, fakeRequest('OPTIONS', {}).request), 'allowed');
    assert.equal(await outcome(hook, fakeRequest('GET', {}).request), '401 Missing Authentication Token');
    assert.equal(await outcome(hook, fakeRequest('GET', { authorization: '' }).request), '401 Missing Authentication Token');
    for (const authorization of ['Bearer admin-token-012345678', 'Bearer admin-token-0123456789x', 'Basic YWRtaW46eA==', 'admin-token-0123456789', 'bearer admin-token-0123456789']) {
      assert.equal(await outcome(hook, fakeRequest('GET', { authorization }).request), '403 Forbidden', authorization);
    }
  });

  it('accepts the admin bearer token (surrounding blanks ignored) and a valid SigV4 signature', async () => {
    assert.equal(await outcome(hook, fakeRequest('GET', { authorization: 'Bearer admin-token-0123456789' }).request), 'allowed');
    assert.equal(await outcome(hook, fakeRequest('GET', { authorization: 'Bearer  admin-token-0123456789 ' }).request), 'allowed');
    const signed = await signedRequest();
    assert.equal(await outcome(hook, fakeRequest('GET', signed.headers as Record<string, string>).request), 'allowed');
    const body = '{"event_id":"Sample","increment_by":1}';
    const post = await signedRequest({ method: 'POST', path: '/private/increment_serving_counter', query: {}, body });
    const postRequest = fakeRequest('POST', post.headers as Record<string, string>, '/private/increment_serving_counter', Buffer.from(body));
    assert.equal(await outcome(hook, postRequest.request), 'allowed');
  });

  it('refuses a signature over another request, logging only the reason', async () => {
    const signed = await signedRequest();
    const { request, logged } = fakeRequest('GET', signed.headers as Record<string, string>, '/private/expired_tokens?event_id=Sample');
    assert.equal(await outcome(hook, request), '403 Forbidden');
    assert.deepEqual(logged, [{ reason: 'signature mismatch' }, 'SigV4 verification failed']);
    const noBody = fakeRequest('POST', (await signedRequest({ method: 'POST', query: {}, body: '{"a":1}' })).headers as Record<string, string>, '/private/num_active_tokens');
    assert.equal(await outcome(hook, noBody.request), '403 Forbidden', 'a signed body that did not arrive');
  });

  it('refuses a method of authentication that is not configured', async () => {
    const sigv4Only = privateAuthHook({ sigv4: CREDS }, () => NOW);
    assert.equal(await outcome(sigv4Only, fakeRequest('GET', { authorization: 'Bearer ' }).request), '403 Forbidden');
    assert.equal(await outcome(sigv4Only, fakeRequest('GET', { authorization: 'Bearer undefined' }).request), '403 Forbidden');
    const bearerOnly = privateAuthHook({ adminToken: 'admin-token-0123456789' }, () => NOW);
    const signed = await signedRequest();
    assert.equal(await outcome(bearerOnly, fakeRequest('GET', signed.headers as Record<string, string>).request), '403 Forbidden');
  });

  it('checks the signature date against its own clock', async () => {
    const late = privateAuthHook({ sigv4: CREDS }, () => NOW + 16 * 60_000);
    const signed = await signedRequest();
    const { request, logged } = fakeRequest('GET', signed.headers as Record<string, string>);
    assert.equal(await outcome(late, request), '403 Forbidden');
    assert.deepEqual(logged, [{ reason: 'request date out of range' }, 'SigV4 verification failed']);
  });
});

describe('helpers of the signature checks', () => {
  it('secretsEqual compares whole secrets, whatever their lengths', () => {
    assert.equal(secretsEqual('s3cret', 's3cret'), true);
    assert.equal(secretsEqual('s3cret', 's3cre'), false);
    assert.equal(secretsEqual('s3cret', 's3cret!'), false);
    assert.equal(secretsEqual('', ''), true);
  });

  it('NodeSha256 hashes strings, buffers and views, HMACs with a secret, and starts over on reset', async () => {
    const sha = (text: string) => createHash('sha256').update(text).digest();
    const plain = new NodeSha256();
    plain.update('ab');
    plain.update(new TextEncoder().encode('cd').buffer);
    plain.update(new Uint8Array(Buffer.from('xxef')).subarray(2));
    assert.deepEqual(Buffer.from(await plain.digest()), sha('abcdef'));
    plain.reset();
    plain.update('z');
    assert.deepEqual(Buffer.from(await plain.digest()), sha('z'));
    const mac = new NodeSha256('key');
    mac.update('message');
    assert.deepEqual(Buffer.from(await mac.digest()), createHmac('sha256', 'key').update('message').digest());
    mac.reset();
    mac.update('again');
    assert.deepEqual(Buffer.from(await mac.digest()), createHmac('sha256', 'key').update('again').digest());
    const wide = new NodeSha256();
    wide.update(new Uint16Array([0x6261])); // a view of another element size: its bytes, 'ab' (little-endian)
    assert.deepEqual(Buffer.from(await wide.digest()), sha('ab'));
    const bytesKey = new NodeSha256(new TextEncoder().encode('key'));
    bytesKey.update('message');
    assert.deepEqual(Buffer.from(await bytesKey.digest()), createHmac('sha256', 'key').update('message').digest());
  });
});

describe('secretMatcher (the public API key, hashed once)', () => {
  it('accepts the secret and nothing else, whatever the length', () => {
    const matches = secretMatcher('public-api-key-0123456789');
    assert.equal(matches('public-api-key-0123456789'), true);
    for (const other of ['', 'public-api-key-012345678', 'public-api-key-01234567890', 'PUBLIC-API-KEY-0123456789']) {
      assert.equal(matches(other), false, other);
    }
  });
});

describe('privateCaller (who made a private call, for the audit log)', () => {
  const caller = (authorization?: string) =>
    privateCaller({ headers: authorization === undefined ? {} : { authorization } } as unknown as FastifyRequest);

  it('names the admin token or the SigV4 access key ID, never a secret', () => {
    assert.equal(caller('Bearer some-admin-token-0123456789'), 'admin token');
    const sigv4 = 'AWS4-HMAC-SHA256 Credential=AKARTESTACCESSKEY001/20261124/eu-west-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=' + '0'.repeat(64);
    assert.equal(caller(sigv4), 'SigV4 access key AKARTESTACCESSKEY001');
  });

  it('says unknown for anything else (no header, another scheme, a credential without key ID)', () => {
    assert.equal(caller(), 'unknown');
    assert.equal(caller('Basic dXNlcjpwYXNz'), 'unknown');
    assert.equal(caller('AWS4-HMAC-SHA256 Credential=/20261124/eu-west-1/execute-api/aws4_request'), 'unknown');
    assert.equal(caller('Token Bearer x'), 'unknown', 'Bearer only as the scheme');
  });
});
