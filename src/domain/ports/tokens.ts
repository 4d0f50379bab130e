// What the waiting room needs of token signing (implemented by src/tokens/: KeyRing and TokenSigner). The
// private key never crosses this port: the domain sees key IDs and public keys only.

import type { TokenRecord } from '../claims.ts';

/** The JWS algorithms a room can sign with (its `signing_algorithm` setting). */
export type SigningAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface RsaPublicJwk {
  kty: 'RSA';
  alg: 'RS256';
  kid: string;
  n: string;
  e: string;
}

export interface EcPublicJwk {
  kty: 'EC';
  crv: 'P-256';
  alg: 'ES256';
  kid: string;
  x: string;
  y: string;
}

export interface OkpPublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  alg: 'EdDSA';
  kid: string;
  x: string;
}

export type PublicJwk = RsaPublicJwk | EcPublicJwk | OkpPublicJwk;

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

export interface PublicKeyInfo {
  kid: string;
  publicJwk: PublicJwk;
}

/** The rooms' signing keys: created on first use and shared by every node. */
export interface SigningKeys {
  /** The key new tokens of the room are signed with, for the room's algorithm (default RS256). */
  current(eventId: string, algorithm?: SigningAlgorithm): Promise<PublicKeyInfo>;
  /** Every key of the room, oldest first: for each stored key, its RS256, ES256 and EdDSA keys. */
  all(eventId: string): Promise<PublicKeyInfo[]>;
  /**
   * Drops what this process holds of the room's keys: the room was deleted (and its keys with it), so a room
   * created again under the same ID signs with a key of its own, read from the store or made anew.
   */
  forget(eventId: string): void;
}

/**
 * Turns a stored token record into its three signed JWTs (the same record always gives the same set): from the
 * record's stored signatures when it has them (no signing), else signed now.
 */
export interface TokenSigning {
  sign(eventId: string, record: TokenRecord): Promise<TokenSet>;
  /**
   * The three JWTs of a record just made for a first claim (not stored yet, no signatures): signed now. Kept
   * apart from sign() because nothing will ask for this record's set again by this route: the store keeps its
   * signatures, so a re-claim rebuilds it without signing.
   */
  signNew(eventId: string, record: TokenRecord): Promise<TokenSet>;
}
