// The checks of an authorization request (GET|POST /authorize, and again when the login page joins the
// queue, since its URL can be edited), one named step per rule, in the order of spec/integrations.md §2.
//
// Until the redirect URI is known to be one of the client's, nothing may be sent to it: errors of steps 0–2
// are answered here (400). Once it is, later errors go back to the relying party as OAuth2 error redirects
// (RFC 6749 §4.1.2.1), which is how standard clients expect to learn about them.

import { OAuthErrors, type OAuthError } from '../domain/errors.ts';
import type { OidcClient, OidcClients } from './clients.ts';
import type { RawParameters } from './parameters.ts';

/** The parameters the adapter reads; any other parameter is ignored. */
export const AUTHORIZE_PARAMETERS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
] as const;

type AuthorizeParameter = (typeof AUTHORIZE_PARAMETERS)[number];

/** Bounds what a visitor's URL can make us store per request ID. */
export const MAX_PARAMETER_LENGTH = 2048;

/** RFC 7636 §4.2: the challenge is 43–128 characters of the URL-safe alphabet (S256 gives 43). */
const CODE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/** A validated authorization request. */
export interface AuthorizationRequest {
  client: OidcClient;
  redirectUri: string;
  scope: string;
  state?: string | undefined;
  nonce?: string | undefined;
  codeChallenge?: string | undefined;
  codeChallengeMethod?: 'S256' | undefined;
}

export type AuthorizeOutcome =
  | { kind: 'valid'; request: AuthorizationRequest }
  /** No trusted redirect URI: answer the error to the browser, never redirect. */
  | { kind: 'refused'; error: OAuthError }
  /** The redirect URI is the client's: send the error back to the relying party. */
  | { kind: 'redirect-error'; error: OAuthError; redirectUri: string; state?: string | undefined };

interface AuthorizeContext {
  raw: RawParameters;
  params: Partial<Record<AuthorizeParameter, string>>;
  clients: OidcClients;
  client?: OidcClient;
  redirectUri?: string;
  codeChallengeMethod?: 'S256';
}

type AuthorizeStep = (ctx: AuthorizeContext) => void;

// 0. Every parameter at most once (RFC 6749 §3.1) and of bounded length.
const checkParameters: AuthorizeStep = (ctx) => {
  for (const name of AUTHORIZE_PARAMETERS) {
    const values = ctx.raw.get(name) ?? [];
    if (values.length > 1) throw OAuthErrors.invalidRequest(`${name} must not be repeated`);
    const value = values[0];
    if (value === undefined || value === '') continue;
    if (value.length > MAX_PARAMETER_LENGTH) {
      throw OAuthErrors.invalidRequest(`${name} is longer than ${MAX_PARAMETER_LENGTH} characters`);
    }
    ctx.params[name] = value;
  }
};

// 1. client_id names an event configured with OpenID Connect.
const checkClient: AuthorizeStep = (ctx) => {
  if (ctx.params.client_id === undefined) throw OAuthErrors.invalidRequest('client_id is required');
  const client = ctx.clients.get(ctx.params.client_id);
  if (!client) throw OAuthErrors.invalidRequest('client_id is not a client of this server');
  ctx.client = client;
};

// 2. redirect_uri is exactly one of the client's (no prefix or pattern matching: open redirects start there).
const checkRedirectUri: AuthorizeStep = (ctx) => {
  const given = ctx.params.redirect_uri;
  if (given === undefined) throw OAuthErrors.invalidRequest('redirect_uri is required');
  if (!ctx.client?.redirectUris.includes(given)) {
    throw OAuthErrors.invalidRequest('redirect_uri is not registered for this client');
  }
  ctx.redirectUri = given;
};

// 3. response_type == code (the only flow offered).
const checkResponseType: AuthorizeStep = (ctx) => {
  const responseType = ctx.params.response_type;
  if (responseType === undefined) throw OAuthErrors.invalidRequest('response_type is required');
  if (responseType !== 'code') throw OAuthErrors.unsupportedResponseType('response_type must be code');
};

// 4. scope contains openid; other scopes are ignored (VWR refused them, breaking clients that ask for
//    "openid email profile" by default).
const checkScope: AuthorizeStep = (ctx) => {
  const scope = ctx.params.scope;
  if (scope === undefined) throw OAuthErrors.invalidRequest('scope is required and must contain openid');
  if (!scope.split(' ').includes('openid')) throw OAuthErrors.invalidScope('scope must contain openid');
};

// 5. PKCE: a challenge needs its method, and the method must be S256 (plain would hand the verifier to
//    whoever sees the authorization request).
const checkPkce: AuthorizeStep = (ctx) => {
  const { code_challenge: challenge, code_challenge_method: method } = ctx.params;
  if (method !== undefined && method !== 'S256') {
    throw OAuthErrors.invalidRequest('code_challenge_method must be S256');
  }
  if (challenge === undefined) {
    if (method !== undefined) throw OAuthErrors.invalidRequest('code_challenge_method needs a code_challenge');
    return;
  }
  // RFC 7636 makes a missing method mean "plain", which is refused.
  if (method === undefined) throw OAuthErrors.invalidRequest('code_challenge_method must be S256');
  if (!CODE_CHALLENGE.test(challenge)) throw OAuthErrors.invalidRequest('code_challenge is malformed');
  ctx.codeChallengeMethod = 'S256';
};

// 6. prompt=none asks for an answer without any page; a visitor must queue, so that cannot be honoured.
const checkPrompt: AuthorizeStep = (ctx) => {
  if (ctx.params.prompt?.split(' ').includes('none')) {
    throw OAuthErrors.loginRequired('the visitor must wait in the waiting room');
  }
};

export const AUTHORIZE_STEPS: readonly AuthorizeStep[] = [
  checkParameters,
  checkClient,
  checkRedirectUri,
  checkResponseType,
  checkScope,
  checkPkce,
  checkPrompt,
];

export function checkAuthorizationRequest(raw: RawParameters, clients: OidcClients): AuthorizeOutcome {
  const ctx: AuthorizeContext = { raw, params: {}, clients };
  try {
    for (const step of AUTHORIZE_STEPS) step(ctx);
  } catch (error) {
    const oauthError = error as OAuthError;
    if (ctx.redirectUri === undefined) return { kind: 'refused', error: oauthError };
    return { kind: 'redirect-error', error: oauthError, redirectUri: ctx.redirectUri, state: ctx.params.state };
  }
  return {
    kind: 'valid',
    request: {
      client: ctx.client as OidcClient,
      redirectUri: ctx.redirectUri as string,
      scope: ctx.params.scope as string,
      state: ctx.params.state,
      nonce: ctx.params.nonce,
      codeChallenge: ctx.params.code_challenge,
      codeChallengeMethod: ctx.codeChallengeMethod,
    },
  };
}

/** The validated parameters again, for the login page's URL (URLSearchParams encodes every value). */
export function loginPageQuery(request: AuthorizationRequest): URLSearchParams {
  const query = new URLSearchParams({
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    scope: request.scope,
  });
  if (request.state !== undefined) query.set('state', request.state);
  if (request.nonce !== undefined) query.set('nonce', request.nonce);
  if (request.codeChallenge !== undefined) {
    query.set('code_challenge', request.codeChallenge);
    query.set('code_challenge_method', 'S256');
  }
  return query;
}

/**
 * The redirect URI with response parameters appended. The registered URI is kept character for character,
 * an existing query included (it was matched exactly, and the relying party may compare it exactly when it
 * exchanges the code); the parameters are form-encoded, so a state like "a&b=c" cannot inject parameters.
 */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  const separator = !redirectUri.includes('?') ? '?' : /[?&]$/.test(redirectUri) ? '' : '&';
  return `${redirectUri}${separator}${query}`;
}

/** The error redirect of RFC 6749 §4.1.2.1. */
export function errorRedirect(redirectUri: string, error: OAuthError, state: string | undefined): string {
  return redirectWith(redirectUri, { error: error.oauthError, error_description: error.message, state });
}
