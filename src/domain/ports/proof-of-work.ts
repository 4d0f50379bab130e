// Port: proof-of-work challenges at join (docs/bots.md). The domain decides when a challenge is needed, how hard
// it is and that each is used once (src/domain/bot-defence.ts); an adapter (src/pow/altcha.ts, ALTCHA) makes
// and checks the challenges themselves. Every node must check what any node issued: the adapter's signing
// secret is shared through the store.

/** A checked solution: who issued it is known, and it is the challenge's only use that counts. */
export type ProofCheck =
  | {
      ok: true;
      /** Names the challenge: the single-use mark is kept under it. */
      challengeId: string;
      /** When the challenge stops being valid (ms since the epoch), as signed: the caller judges it by its clock. */
      expiresAtMs: number;
    }
  | { ok: false; reason: 'malformed' | 'expired' | 'invalid' | 'other-room' };

export interface ProofOfWork {
  /**
   * A new challenge for the room, answered as it is by GET /challenge (a JSON value). `difficulty`: the
   * average work, in hashes, is about 0.75 × difficulty.
   */
  issue(eventId: string, difficulty: number, expiresAtMs: number): Promise<unknown>;
  /** Checks a solution (the `proof_of_work` of a join) for the room, before anything is stored; not its expiry. */
  verify(eventId: string, payload: string): Promise<ProofCheck>;
}
