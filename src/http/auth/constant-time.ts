import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in constant time. Both sides are hashed first so that neither the content nor the
 * length of the expected secret leaks through timing.
 */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/**
 * The same comparison against one secret fixed for the life of the process (the public API key): its hash is
 * computed once, so that a check per request (every poll, behind a CDN) hashes only the given value.
 */
export function secretMatcher(expected: string): (given: string) => boolean {
  const expectedHash = sha256(expected);
  return (given) => timingSafeEqual(sha256(given), expectedHash);
}

const sha256 = (text: string): Buffer => hash('sha256', text, 'buffer');
