// The claims of a token set (spec: "Tokens"). The three tokens share every claim but token_use.

export type TokenUse = 'access' | 'refresh' | 'id';
export const TOKEN_USES: readonly TokenUse[] = ['access', 'refresh', 'id'];

/** What the store keeps for an issued token set: enough to rebuild the exact same three JWTs. */
export interface TokenRecord {
  requestId: string;
  position: number;
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
  kid: string;
  /** 0 open, 1 completed, −1 abandoned. */
  status: SessionStatus;
  /** OpenID Connect nonce, carried into the id token only. */
  nonce?: string | undefined;
  /**
   * The signatures of the three JWTs (access, refresh, id: base64url, joined by "."), stored with the record when
   * it is issued: a re-claim rebuilds the same tokens from the claims and these, without signing (issue 15).
   * Absent in records stored before; they are signed again.
   */
  signatures?: string | undefined;
}

/** The signature segments of a token set, as TokenRecord.signatures keeps them. */
export function signaturesOf(tokens: { access_token: string; refresh_token: string; id_token: string }): string {
  return [tokens.access_token, tokens.refresh_token, tokens.id_token].map((jwt) => jwt.slice(jwt.lastIndexOf('.') + 1)).join('.');
}

/** Whether two records make the same three JWTs (every field they are built from, and the stored signatures). */
export function sameTokenSet(a: TokenRecord, b: TokenRecord): boolean {
  return (
    a.requestId === b.requestId &&
    a.position === b.position &&
    a.iat === b.iat &&
    a.nbf === b.nbf &&
    a.exp === b.exp &&
    a.iss === b.iss &&
    a.kid === b.kid &&
    a.nonce === b.nonce &&
    a.signatures === b.signatures
  );
}

export type SessionStatus = 0 | 1 | -1;

export interface TokenClaims {
  aud: string;
  sub: string;
  queue_position: number;
  token_use: TokenUse;
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
  nonce?: string;
}

/** Claim order is fixed so that re-signing the same record yields byte-identical tokens. */
export function buildClaims(eventId: string, record: TokenRecord, use: TokenUse): TokenClaims {
  const claims: TokenClaims = {
    aud: eventId,
    sub: record.requestId,
    queue_position: record.position,
    token_use: use,
    iat: record.iat,
    nbf: record.nbf,
    exp: record.exp,
    iss: record.iss,
  };
  if (use === 'id' && record.nonce !== undefined) claims.nonce = record.nonce;
  return claims;
}

export function newTokenRecord(input: {
  requestId: string;
  position: number;
  now: number;
  validityPeriod: number;
  issuer: string;
  kid: string;
  nonce?: string | undefined;
}): TokenRecord {
  return {
    requestId: input.requestId,
    position: input.position,
    iat: input.now,
    nbf: input.now,
    exp: input.now + input.validityPeriod,
    iss: input.issuer,
    kid: input.kid,
    status: 0,
    nonce: input.nonce,
  };
}
