// Every error of the OpenID Connect adapter, in one catalogue.
//
// The OAuth2 endpoints (/authorize, /token, /userInfo) answer in OAuth2's own shape, `{"error": code,
// "error_description": text}` (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3), not the contract's `{"error":
// message}`: relying-party libraries branch on the code. The adapter's own JSON endpoints (the login page's
// join/continue calls and the private API) use the contract's shape like the rest of Anteroom.

import { ContractError } from '../domain/errors.ts';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'login_required'
  | 'access_denied'
  | 'invalid_token';

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(code: OAuthErrorCode, description: string, status = 400, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'OAuthError';
    this.code = code;
    this.status = status;
    this.headers = headers;
  }

  get body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

const oauth = (code: OAuthErrorCode) => (description: string) => new OAuthError(code, description);

export const OAuthErrors = {
  invalidRequest: oauth('invalid_request'),
  invalidGrant: oauth('invalid_grant'),
  unsupportedGrantType: oauth('unsupported_grant_type'),
  unsupportedResponseType: oauth('unsupported_response_type'),
  invalidScope: oauth('invalid_scope'),
  loginRequired: oauth('login_required'),
  accessDenied: oauth('access_denied'),
  /**
   * RFC 6749 §5.2: a client that tried HTTP Basic gets 401 with a WWW-Authenticate challenge; one that sent
   * its credentials in the form gets 400 (a 401 must carry a challenge, and Basic is not what it used).
   */
  invalidClient: (description: string, usedBasic: boolean) =>
    usedBasic
      ? new OAuthError('invalid_client', description, 401, { 'www-authenticate': 'Basic realm="anteroom", charset="UTF-8"' })
      : new OAuthError('invalid_client', description, 400),
  /**
   * RFC 6750 §3: no credentials at all → a bare challenge (no error code); a token that does not verify →
   * error="invalid_token". Both 401. Descriptions are fixed ASCII texts without quotes (header-safe).
   */
  missingBearerToken: () =>
    new OAuthError('invalid_token', 'No access token was presented', 401, {
      'www-authenticate': 'Bearer realm="anteroom"',
    }),
  invalidBearerToken: (description: string) =>
    new OAuthError('invalid_token', description, 401, {
      'www-authenticate': `Bearer realm="anteroom", error="invalid_token", error_description="${description}"`,
    }),
} as const;

const contract = (status: number, message: string) => () => new ContractError(status, message);

/** Errors of the adapter's own JSON endpoints, in the contract's `{"error": message}` shape. */
export const OidcErrors = {
  /** An event that exists but has no `oidc` section in the configuration. */
  oidcNotEnabled: contract(404, 'OpenID Connect is not enabled for this event'),
  /** The JWKS with no client to publish keys for (never an empty key list). */
  noOidcClients: contract(404, 'OpenID Connect is not enabled for any event'),
  /** The login page's join call with parameters /authorize would refuse. */
  invalidAuthorizationRequest: (description: string) => new ContractError(400, description),
  /** The event was reset between the join and the binding of the authorization request. */
  joinInterrupted: contract(503, 'The waiting room was reset while joining; please try again'),
} as const;
