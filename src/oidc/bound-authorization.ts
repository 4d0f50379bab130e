// What the store keeps, per request ID, of the authorization request a visitor joined with: enough to send
// them back to the right place when served (redirect_uri, state) and to check the code exchange against
// (redirect_uri, PKCE challenge) and finish it (nonce). The store treats it as opaque text.

import type { AuthorizationRequest } from './authorize-checks.ts';

export interface BoundAuthorization {
  redirect_uri: string;
  scope: string;
  state?: string | undefined;
  nonce?: string | undefined;
  code_challenge?: string | undefined;
  code_challenge_method?: 'S256' | undefined;
}

export function bindAuthorization(request: AuthorizationRequest): string {
  const bound: BoundAuthorization = {
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallengeMethod,
  };
  return JSON.stringify(bound);
}

export function readBoundAuthorization(stored: string): BoundAuthorization {
  const value = JSON.parse(stored) as Partial<BoundAuthorization>;
  if (typeof value.redirect_uri !== 'string' || typeof value.scope !== 'string') {
    throw new Error('malformed OIDC authorization record in the store');
  }
  const optional = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    redirect_uri: value.redirect_uri,
    scope: value.scope,
    state: optional(value.state),
    nonce: optional(value.nonce),
    code_challenge: optional(value.code_challenge),
    code_challenge_method: value.code_challenge_method === 'S256' ? 'S256' : undefined,
  };
}
