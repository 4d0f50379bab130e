// Event keys and tokens as an Anteroom server makes them, plus the forgeries an attacker would try.
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, importJWK } from 'jose';
import type { JWK, JWTPayload } from 'jose';

export const EVENT_ID = 'Sample';
export const ISSUER = 'https://waitingroom.example.com';
/** The tests' "now", in epoch seconds. */
export const NOW = 1_767_225_600;
export const VALIDITY = 3600;

export interface EventKey {
  kid: string;
  privateKey: CryptoKey;
  /** What `/public_key` serves: `{kty, alg, kid, n, e}`. */
  publicJwk: JWK;
  /** The public key as PEM: the bytes an HS256 key-confusion attack uses as the HMAC secret. */
  publicPem: string;
  privateJwk: JWK;
}

export async function generateEventKey(kid = randomBytes(16).toString('hex')): Promise<EventKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const { kty, n, e } = await exportJWK(publicKey);
  return {
    kid,
    privateKey,
    publicJwk: { kty, alg: 'RS256', kid, n, e },
    publicPem: await exportSPKI(publicKey),
    privateJwk: await exportJWK(privateKey),
  };
}

/** The claims of a freshly issued token set, issued at `iat`. */
export function accessClaims(overrides: JWTPayload = {}, iat = NOW): JWTPayload {
  return {
    aud: EVENT_ID,
    sub: randomUUID(),
    queue_position: 42,
    token_use: 'access',
    iat,
    nbf: iat,
    exp: iat + VALIDITY,
    iss: ISSUER,
    ...overrides,
  };
}

export function sign(key: EventKey, claims: JWTPayload = accessClaims(), alg = 'RS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

/** The same RSA key material, signing with another algorithm (RS384, PS256, …). */
export async function signWithOtherAlgorithm(key: EventKey, alg: string, claims = accessClaims()): Promise<string> {
  const privateKey = await importJWK({ ...key.privateJwk, alg: undefined }, alg);
  return new SignJWT(claims).setProtectedHeader({ alg, kid: key.kid, typ: 'JWT' }).sign(privateKey);
}

/** The classic key-confusion forgery: HS256 with the public key as the HMAC secret. */
export function signHs256WithPublicKey(key: EventKey, claims = accessClaims()): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
    .sign(new TextEncoder().encode(key.publicPem));
}

export function unsigned(key: EventKey, claims = accessClaims()): string {
  return `${b64(JSON.stringify({ alg: 'none', kid: key.kid, typ: 'JWT' }))}.${b64(JSON.stringify(claims))}.`;
}

/** Replaces a token's payload, keeping its header and signature. */
export function withPayload(token: string, change: (claims: JWTPayload) => JWTPayload): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as JWTPayload;
  return `${header}.${b64(JSON.stringify(change(claims)))}.${signature}`;
}

function b64(text: string): string {
  return Buffer.from(text).toString('base64url');
}
