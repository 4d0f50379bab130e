// GET|POST /userInfo: the claims of a verified access token. VWR only decoded the token and compared claims
// (and answered 500 without an Authorization header); here the RS256 signature is verified with the event's
// own keys, read in-process (no HTTP call to our own JWKS), then exp/nbf, iss == the OIDC issuer,
// aud == a client of this server, and token_use == access.

import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../domain/clock.ts';
import { OAuthErrors } from '../domain/errors.ts';
import type { WaitingRoomService } from '../domain/waiting-room-service.ts';
import type { OidcClients } from './clients.ts';

export interface UserInfoDeps {
  room: WaitingRoomService;
  clients: OidcClients;
  issuer: () => string;
  clock: Clock;
}

export async function userInfoClaims(token: string | undefined, deps: UserInfoDeps): Promise<JWTPayload> {
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
  const jwks = await deps.room.jwks(client.clientId);
  if (jwks.status !== 200) throw new Error(`no signing keys for event ${client.clientId}`);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, createLocalJWKSet(jwks.body), {
      algorithms: ['RS256'],
      issuer: deps.issuer(),
      audience: client.clientId,
      currentDate: new Date(deps.clock()),
      requiredClaims: ['exp', 'sub'],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw OAuthErrors.invalidBearerToken('The access token has expired');
    throw OAuthErrors.invalidBearerToken('The access token is not valid');
  }
  if (payload.token_use !== 'access') throw OAuthErrors.invalidBearerToken('The token is not an access token');
  return payload;
}
