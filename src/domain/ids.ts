import { randomUUID } from 'node:crypto';

// The whole string must be a UUID (VWR matched only a prefix and accepted trailing junk).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && value.length === 36 && UUID.test(value);
}

/** A visitor's bearer secret: UUID v4, 122 random bits from the CSPRNG. */
export function newRequestId(): string {
  return randomUUID();
}

/**
 * Request IDs are matched case-insensitively (the contract accepts either case) and stored lowercase, so
 * one visitor cannot hold two spellings of the same ID.
 */
export function normaliseRequestId(value: string): string {
  return value.toLowerCase();
}
