// Proof of work with ALTCHA (altcha-lib, v2 challenges): the challenges of GET /challenge and the check of the
// solutions joins carry. Deterministic mode: the server draws the counter the solver has to reach, between
// difficulty/2 and difficulty (so the average work is about 0.75 × difficulty SHA-256 hashes, and a lucky
// solver cannot be much luckier than that), signs the parameters, and checks a solution with one HMAC of the
// derived key instead of redoing any of the work. The room's event ID and the expiry are in the signed
// parameters (`data`), so a solution for one room is refused in another; the expiry is judged by the domain's
// clock (ALTCHA's own `expiresAt` would be judged by the wall clock, which tests do not control). The two HMAC keys are derived from one secret every node shares
// (kept in the store). That the solution is used once is the domain's job (BotDefence, with the store).

import { createHmac } from 'node:crypto';
import { createChallenge, randomInt, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { Challenge, Payload } from 'altcha-lib/types';
import type { ProofCheck, ProofOfWork } from '../domain/ports/proof-of-work.ts';

/** A payload larger than this is refused unread (a challenge and its solution take well under 1 KiB). */
const MAX_PAYLOAD_LENGTH = 4096;

export class AltchaProofOfWork implements ProofOfWork {
  private readonly signatureSecret: string;
  private readonly keySignatureSecret: string;

  /** `secret`: shared by every node (the composition root keeps it in the store); never logged. */
  constructor(secret: string) {
    const derive = (purpose: string) => createHmac('sha256', secret).update(purpose).digest('hex');
    this.signatureSecret = derive('altcha challenge signature');
    this.keySignatureSecret = derive('altcha key signature');
  }

  async issue(eventId: string, difficulty: number, expiresAtMs: number): Promise<Challenge> {
    return createChallenge({
      algorithm: 'SHA-256',
      cost: 1,
      counter: randomInt(difficulty, Math.max(1, Math.ceil(difficulty / 2))),
      deriveKey,
      data: { event_id: eventId, expires_at_ms: expiresAtMs },
      hmacSignatureSecret: this.signatureSecret,
      hmacKeySignatureSecret: this.keySignatureSecret,
    });
  }

  async verify(eventId: string, payload: string): Promise<ProofCheck> {
    const parsed = readPayload(payload);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const { challenge, solution } = parsed;
    if (challenge.parameters.data?.event_id !== eventId) return { ok: false, reason: 'other-room' };
    let result;
    try {
      result = await verifySolution({
        challenge,
        solution,
        deriveKey,
        hmacSignatureSecret: this.signatureSecret,
        hmacKeySignatureSecret: this.keySignatureSecret,
      });
    } catch {
      // altcha-lib throws on parameters it cannot use (an unknown algorithm): a bad payload, not our failure.
      return { ok: false, reason: 'malformed' };
    }
    const expiresAtMs = challenge.parameters.data?.expires_at_ms;
    if (!result.verified || typeof challenge.signature !== 'string' || typeof expiresAtMs !== 'number') {
      return { ok: false, reason: 'invalid' };
    }
    return { ok: true, challengeId: challenge.signature, expiresAtMs };
  }
}

/** The ALTCHA payload: base64 of JSON {challenge, solution} (what the ALTCHA widget submits), or undefined. */
function readPayload(payload: string): Payload | undefined {
  if (payload.length > MAX_PAYLOAD_LENGTH) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { challenge, solution } = value as Record<string, unknown>;
  if (typeof challenge !== 'object' || challenge === null || typeof solution !== 'object' || solution === null) return undefined;
  const parameters = (challenge as Record<string, unknown>).parameters;
  if (typeof parameters !== 'object' || parameters === null) return undefined;
  return value as Payload;
}
