// GET|POST /userInfo: the claims of a verified access token. VWR only decoded the token and compared claims
// (and answered 500 without an Authorization header); here the token goes through the authorizer library's
// verifier, so /userInfo accepts exactly what a site protected by `anteroom-authorizer` accepts: RS256, ES256 or EdDSA signed
// by the event's own keys (read in-process, no HTTP call to our own JWKS), exp/nbf/iat/sub present, exp and
// nbf against the clock, iss == the OIDC issuer, aud == a client of this server, token_use == access.

import { decodeJwt } from 'jose';
import { AuthorizerError, verifyAccessTokenWithKeys, type RefusalReason, type VerifiedClaims } from 'anteroom-authorizer';
import type { Clock } from '../domain/clock.ts';
import { OAuthErrors } from '../domain/errors.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { OidcClients } from './clients.ts';

export interface UserInfoDeps {
  room: Pick<WaitingRoom, 'claims'>;
  clients: OidcClients;
  issuer: () => string;
  clock: Clock;
}

/** The error_description of a refusal that has its own; every other refusal is "not valid". */
const DESCRIPTIONS: Partial<Record<RefusalReason, string>> = {
  expired: 'The access token has expired',
  wrong_token_use: 'The token is not an access token',
};

export async function userInfoClaims(token: string | undefined, deps: UserInfoDeps): Promise<VerifiedClaims> {
  if (token === undefined) throw OAuthErrors.missingBearerToken();
  let audience: unknown;
  try {
    audience = decodeJwt(token).aud;
  } catch {
    throw OAuthErrors.invalidBearerToken('The access token is malformed');
  }
  // The audience picks the key set; the signature check below is what makes the choice trustworthy.
  const client = deps.clients.get(audience);
  if (!client) throw OAuthErrors.invalidBearerToken('The access token is not valid');
  const jwks = await deps.room.claims.jwks(client.clientId);
  if (jwks.status !== 200) throw new Error(`no signing keys for event ${client.clientId}`);
  try {
    return await verifyAccessTokenWithKeys(token, jwks.body, {
      eventId: client.clientId,
      issuer: deps.issuer(),
      clock: deps.clock,
    });
  } catch (error) {
    if (!(error instanceof AuthorizerError)) throw error;
    throw OAuthErrors.invalidBearerToken(DESCRIPTIONS[error.reason] ?? 'The access token is not valid');
  }
}
