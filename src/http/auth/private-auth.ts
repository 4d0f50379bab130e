// Authentication of the private API: AWS SigV4 (what VWR's control panel and inlet strategies send) or
// `Authorization: Bearer <admin token>`. Missing credentials → 401, wrong ones → 403. Preflights are
// never authenticated. Secrets are compared in constant time and never logged.

import type { FastifyRequest } from 'fastify';
import { Errors } from '../../domain/errors.ts';
import { secretsEqual } from './constant-time.ts';
import { looksLikeSigV4, verifySigV4, type SigV4Credentials } from './sigv4.ts';

export interface PrivateCredentials {
  adminToken?: string | undefined;
  sigv4?: SigV4Credentials | undefined;
}

export function privateAuthHook(credentials: PrivateCredentials, nowMs: () => number) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    if (request.method === 'OPTIONS') return;
    const authorization = request.headers.authorization;
    if (!authorization) throw Errors.missingAuthenticationToken();
    if (authorization.startsWith('Bearer ')) {
      const token = authorization.slice('Bearer '.length).trim();
      if (credentials.adminToken && secretsEqual(token, credentials.adminToken)) return;
      throw Errors.forbidden();
    }
    if (looksLikeSigV4(authorization) && credentials.sigv4) {
      const [path, query = ''] = request.raw.url!.split('?', 2) as [string, string?];
      const verdict = await verifySigV4(
        {
          method: request.method,
          path,
          query,
          headers: request.headers,
          body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        },
        credentials.sigv4,
        nowMs(),
      );
      if (verdict.ok) return;
      request.log.info({ reason: verdict.reason }, 'SigV4 verification failed');
    }
    throw Errors.forbidden();
  };
}

/**
 * Which credential an authenticated private request used, for the audit log: "admin token", or the SigV4
 * access key ID (never a secret). Call only after the hook accepted the request.
 */
export function privateCaller(request: FastifyRequest): string {
  const authorization = request.headers.authorization ?? '';
  if (authorization.startsWith('Bearer ')) return 'admin token';
  const accessKeyId = /Credential=([A-Za-z0-9]+)\//.exec(authorization)?.[1];
  return accessKeyId ? `SigV4 access key ${accessKeyId}` : 'unknown';
}
