// The decision order of generate_token and queue_pos_expiry (spec/core-api.md), one named step per rule, in
// spec order. Each step looks at the claim context read from the store and either decides or passes.
// Steps 1 (validation of event and request ID) happen before the store is read, in the service.

import { hasExpired, secondsLeft } from './expiry.ts';
import type { TokenRecord } from './claims.ts';
import type { ClaimContext } from './ports/store.ts';

export interface ExpiryRule {
  enabled: boolean;
  period: number;
}

export type ClaimDecision =
  | { kind: 'no-position' }
  /** The visitor gave the position up (leave_queue) → 410. */
  | { kind: 'position-left' }
  | { kind: 'not-served-yet' }
  | { kind: 'session-closed' }
  | { kind: 'reissue'; record: TokenRecord }
  | { kind: 'position-expired' }
  | { kind: 'issue'; position: number };

/** What the room's phase says about claims (src/domain/room-phase.ts). */
export interface ClaimRoom {
  /** A room that is `off` serves every position at once, whatever the counter says. */
  servesEveryone: boolean;
}

type ClaimStep = (ctx: ClaimContext, rule: ExpiryRule, now: number, room: ClaimRoom) => ClaimDecision | undefined;

// 2b. The position was given up (spec/rooms.md §4): "a later generate_token answers 410", served or not.
const checkNotLeft: ClaimStep = (ctx) => (ctx.left ? { kind: 'position-left' } : undefined);

// 3. Position > serving counter → 202 (not in an `off` room: there everyone is served at once).
const checkBeingServed: ClaimStep = (ctx, _rule, _now, room) =>
  ctx.position > ctx.serving && !room.servesEveryone ? { kind: 'not-served-yet' } : undefined;

// 4. A token set already exists: closed session → 410, else the same tokens again.
const checkExistingTokenSet: ClaimStep = (ctx) => {
  if (!ctx.token) return undefined;
  return ctx.token.status !== 0 ? { kind: 'session-closed' } : { kind: 'reissue', record: ctx.token };
};

// 5. Expiry enabled and the position expired unclaimed → 410.
const checkPositionNotExpired: ClaimStep = (ctx, rule, now) =>
  rule.enabled && hasExpired(ctx, now, rule.period) ? { kind: 'position-expired' } : undefined;

const CLAIM_STEPS: readonly ClaimStep[] = [checkNotLeft, checkBeingServed, checkExistingTokenSet, checkPositionNotExpired];

const QUEUED_ROOM: ClaimRoom = { servesEveryone: false };

/** 2.–6. of generate_token; `null` context means the request ID has no position (404). */
export function decideClaim(
  ctx: ClaimContext | null,
  rule: ExpiryRule,
  now: number,
  room: ClaimRoom = QUEUED_ROOM,
): ClaimDecision {
  if (!ctx) return { kind: 'no-position' };
  for (const step of CLAIM_STEPS) {
    const decision = step(ctx, rule, now, room);
    if (decision) return decision;
  }
  return { kind: 'issue', position: ctx.position };
}

export type ExpiryDecision =
  | { kind: 'no-position' }
  | { kind: 'position-left' }
  | { kind: 'expiry-not-enabled' }
  | { kind: 'not-served-yet' }
  | { kind: 'position-expired' }
  | { kind: 'expires-in'; seconds: number };

/**
 * queue_pos_expiry: 404 no position; 410 given up (leave_queue); 202 expiry off; 202 not served yet; 410 expired;
 * 200 seconds left.
 * Once a token set is issued the position can no longer expire (spec), so it is never reported expired;
 * the seconds left are then those the visitor had when the token was issued, floored at 0.
 */
export function decideExpiry(ctx: ClaimContext | null, rule: ExpiryRule, now: number): ExpiryDecision {
  if (!ctx) return { kind: 'no-position' };
  if (ctx.left) return { kind: 'position-left' };
  if (!rule.enabled || ctx.expiryEnabledSince === null) return { kind: 'expiry-not-enabled' };
  if (ctx.position > ctx.serving) return { kind: 'not-served-yet' };
  if (ctx.token) return { kind: 'expires-in', seconds: secondsLeft(ctx, ctx.token.iat, rule.period) };
  if (hasExpired(ctx, now, rule.period)) return { kind: 'position-expired' };
  return { kind: 'expires-in', seconds: secondsLeft(ctx, now, rule.period) };
}
