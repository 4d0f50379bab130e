// POST /token: the authorization-code exchange, one named step per rule, in order. Each step either passes
// or throws an OAuthError; the last one issues (or returns the already issued) token set.
//
// The code is the visitor's request ID. It is accepted only for the client (event) it was issued for, with
// the redirect URI it was bound to at /authorize, with the PKCE verifier of the challenge bound there, and
// only once the visitor is being served.

import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { decodeJwt } from 'jose';
import { ContractError, OAuthErrors } from '../domain/errors.ts';
import { isRequestId, normaliseRequestId } from '../domain/ids.ts';
import type { ClaimService, TokenResponse } from '../domain/services/claim-service.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { secretsEqual } from '../http/auth/constant-time.ts';
import { readBoundAuthorization, type BoundAuthorization } from './bound-authorization.ts';
import type { ClientSecrets } from './client-secrets.ts';
import type { OidcClient, OidcClients } from './clients.ts';
import type { TokenRateLimit } from './token-rate-limit.ts';
import { isFormEncoded, rawParameters, type RawParameters } from './parameters.ts';

export interface TokenDeps {
  room: Pick<WaitingRoom, 'claims'>;
  clients: OidcClients;
  secrets: ClientSecrets;
  issuer: () => string;
  /** Per-client rate limit of this endpoint (token-rate-limit.ts); none when absent. */
  rateLimit?: TokenRateLimit;
}

export interface TokenRequest {
  headers: IncomingHttpHeaders;
  /** The raw body (any content type reaches us as bytes). */
  body: Buffer | undefined;
}

interface TokenContext {
  request: TokenRequest;
  form: RawParameters;
  /** Single-valued form parameters, once checkTokenRequest passed. */
  params: Map<string, string>;
  usedBasic: boolean;
  client?: OidcClient;
  code?: string;
  bound?: BoundAuthorization;
  tokens?: TokenResponse;
}

type TokenStep = (ctx: TokenContext, deps: TokenDeps) => void | Promise<void>;

/** RFC 7636 §4.1: 43–128 characters of the URL-safe alphabet. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

// 1. A form-encoded body (RFC 6749 §4.1.3) whose parameters each appear at most once (§3.2).
const checkTokenRequest: TokenStep = (ctx) => {
  if (!isFormEncoded(ctx.request.headers['content-type'])) {
    throw OAuthErrors.invalidRequest('the body must be application/x-www-form-urlencoded');
  }
  ctx.form = rawParameters(new URLSearchParams(ctx.request.body?.toString('utf8') ?? ''));
  for (const [name, values] of ctx.form) {
    if (values.length > 1) throw OAuthErrors.invalidRequest(`${name} must not be repeated`);
    if (values[0] !== undefined && values[0] !== '') ctx.params.set(name, values[0]);
  }
};

// 2. Client authentication, by HTTP Basic or by form fields, never both (RFC 6749 §2.3.1). VWR advertised
//    Basic but ignored it. The secret is compared in constant time.
const authenticateClient: TokenStep = async (ctx, deps) => {
  const basic = basicCredentials(ctx.request.headers.authorization);
  ctx.usedBasic = basic !== undefined;
  const formSecret = ctx.params.get('client_secret');
  if (basic === 'malformed') throw OAuthErrors.invalidClient('malformed Basic credentials', true);
  if (basic && formSecret !== undefined) {
    throw OAuthErrors.invalidRequest('use one client authentication method, not both');
  }
  const formId = ctx.params.get('client_id');
  if (basic && formId !== undefined && formId !== basic.id) {
    throw OAuthErrors.invalidRequest('client_id differs from the authenticated client');
  }
  const clientId = basic ? basic.id : formId;
  const secret = basic ? basic.secret : formSecret;
  // No credentials at all: answer with the challenge of the method we prefer (a 401 must carry one).
  if (clientId === undefined || secret === undefined) throw OAuthErrors.invalidClient('client authentication is required', true);
  const client = deps.clients.get(clientId);
  // Before the secret is checked: guessing a client's secret goes no faster than the limit.
  if (deps.rateLimit && !deps.rateLimit.take(client ? clientId : '')) {
    throw OAuthErrors.tooManyRequests('too many token requests for this client, retry later');
  }
  if (!client || !(await deps.secrets.verify(client, secret))) {
    throw OAuthErrors.invalidClient('client authentication failed', ctx.usedBasic);
  }
  ctx.client = client;
};

// 3. grant_type=authorization_code, the only grant offered.
const checkGrantType: TokenStep = (ctx) => {
  const grantType = ctx.params.get('grant_type');
  if (grantType === undefined) throw OAuthErrors.invalidRequest('grant_type is required');
  if (grantType !== 'authorization_code') throw OAuthErrors.unsupportedGrantType('grant_type must be authorization_code');
};

// 4. The code is a request ID of this client's event that joined through /authorize.
const checkCode: TokenStep = async (ctx, deps) => {
  const code = ctx.params.get('code');
  if (code === undefined) throw OAuthErrors.invalidRequest('code is required');
  const client = ctx.client as OidcClient;
  const stored = isRequestId(code) ? await deps.room.claims.boundAuthorization(client.clientId, normaliseRequestId(code)) : null;
  if (stored === null) throw OAuthErrors.invalidGrant('the code is not valid for this client');
  ctx.code = normaliseRequestId(code);
  ctx.bound = readBoundAuthorization(stored);
};

// 5. redirect_uri is the one the code was issued for (RFC 6749 §4.1.3: required, since /authorize required it).
const checkRedirectUri: TokenStep = (ctx) => {
  const redirectUri = ctx.params.get('redirect_uri');
  if (redirectUri === undefined) throw OAuthErrors.invalidRequest('redirect_uri is required');
  if (redirectUri !== ctx.bound?.redirect_uri) {
    throw OAuthErrors.invalidGrant('redirect_uri differs from the one of the authorization request');
  }
};

// 6. PKCE (RFC 7636 §4.6): a verifier exactly when a challenge was bound, and BASE64URL(SHA256(verifier))
//    equal to it.
const checkCodeVerifier: TokenStep = (ctx) => {
  const verifier = ctx.params.get('code_verifier');
  const challenge = ctx.bound?.code_challenge;
  if (challenge === undefined) {
    if (verifier !== undefined) throw OAuthErrors.invalidGrant('no code_challenge was sent for this code');
    return;
  }
  if (verifier === undefined) throw OAuthErrors.invalidGrant('code_verifier is required');
  if (!CODE_VERIFIER.test(verifier)) throw OAuthErrors.invalidRequest('code_verifier is malformed');
  const computed = createHash('sha256').update(verifier).digest('base64url');
  if (!secretsEqual(computed, challenge)) throw OAuthErrors.invalidGrant('code_verifier does not match the code_challenge');
};

// 7. Issue the token set, or return the one already issued for the code, with iss = the OIDC issuer and
//    the nonce in the id token. The waiting room's own rules decide: not served yet, position expired or
//    session closed all mean the code cannot be exchanged (invalid_grant).
const issueTokenSet: TokenStep = async (ctx, deps) => {
  const client = ctx.client as OidcClient;
  const bound = ctx.bound as BoundAuthorization;
  const issuer = deps.issuer();
  let answer: Awaited<ReturnType<ClaimService['generateToken']>>;
  try {
    answer = await deps.room.claims.generateToken(client.clientId, ctx.code, { issuer, nonce: bound.nonce });
  } catch (error) {
    if (error instanceof ContractError && error.status >= 400 && error.status < 500) {
      throw OAuthErrors.invalidGrant(`the code cannot be exchanged: ${error.message}`);
    }
    throw error;
  }
  if (answer.status !== 200) throw OAuthErrors.invalidGrant('the visitor is not being served yet');
  // The visitor holds the request ID too and may have claimed a token set through the public API, with
  // another issuer and no nonce: those tokens would fail every relying party's checks.
  const claims = decodeJwt(answer.body.id_token);
  if (claims.iss !== issuer || claims.nonce !== bound.nonce) {
    throw OAuthErrors.invalidGrant('the code was already redeemed outside OpenID Connect');
  }
  ctx.tokens = answer.body;
};

export const TOKEN_STEPS: readonly TokenStep[] = [
  checkTokenRequest,
  authenticateClient,
  checkGrantType,
  checkCode,
  checkRedirectUri,
  checkCodeVerifier,
  issueTokenSet,
];

export async function exchangeCode(request: TokenRequest, deps: TokenDeps): Promise<TokenResponse> {
  const ctx: TokenContext = { request, form: new Map(), params: new Map(), usedBasic: false };
  for (const step of TOKEN_STEPS) await step(ctx, deps);
  return ctx.tokens as TokenResponse;
}

/**
 * `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1 form-encodes both
 * before Basic); undefined when the header is absent or of another scheme.
 */
export function basicCredentials(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*basic(?:\s+(\S*))?\s*$/i.exec(header);
  if (!match) return undefined;
  const encoded = match[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return 'malformed';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const formDecode = (value: string) => decodeURIComponent(value.replaceAll('+', ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}
