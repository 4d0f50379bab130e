// Calls the private API with the operator's credentials: AWS SigV4 (service execute-api, as VWR's control panel
// signed with aws4fetch, so the same panel also drives a VWR deployment) or Anteroom's admin bearer token.
// The credentials live in this object only, never in browser storage.

import { AwsClient } from 'aws4fetch';

export type PrivateCredentials =
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string }
  | { kind: 'token'; token: string };

export class PrivateApi {
  readonly baseUrl: string;
  readonly credentials: PrivateCredentials;
  private readonly aws: AwsClient | undefined;

  constructor(baseUrl: string, credentials: PrivateCredentials) {
    this.baseUrl = baseUrl;
    this.credentials = credentials;
    if (credentials.kind === 'sigv4') {
      if (!globalThis.crypto?.subtle) {
        throw new Error('SigV4 signing needs a secure page (https, or http on localhost). Use the admin token, or open this page over https.');
      }
      this.aws = new AwsClient({
        accessKeyId: credentials.accessKeyId,
        secretAccessKey: credentials.secretAccessKey,
        ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
        service: 'execute-api',
        region: credentials.region,
        // Retries are decided by the caller (only idempotent reads are ever retried).
        retries: 0,
      });
    }
  }

  /** A short description of who is calling, without the secret. */
  get identity(): string {
    return this.credentials.kind === 'sigv4' ? `access key ${this.credentials.accessKeyId}` : 'admin token';
  }

  /** One signed call (signed afresh each time: the signature carries the time). */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    const init: RequestInit = { method, cache: 'no-store' };
    // No Content-Type, like VWR's panel: the body goes out as text/plain, which the private API parses as JSON.
    if (body !== undefined) init.body = JSON.stringify(body);
    if (this.aws) return fetch(await this.aws.sign(url, init));
    return fetch(url, { ...init, headers: { authorization: `Bearer ${(this.credentials as { token: string }).token}` } });
  }
}
