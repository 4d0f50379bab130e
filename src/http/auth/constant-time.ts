import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in constant time. Both sides are hashed first so that neither the content nor the
 * length of the expected secret leaks through timing.
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
