// When a draw's commitment was first published and when its draw fixed the entries (spec rooms.md §3;
// docs/rooms.md "What is published"), kept in the store so that every node, and anyone checking later, sees
// the same two instants: GET /draw publishes them as `committed_at` and `drawn_at`, and both the verification
// page and `anteroom verify-draw` check that the commitment came before the draw.
//
// Each instant is stored once, with the store's set-if-absent (SecretStore.claimSecret: every store has it,
// atomic, the first value stored wins), under a name that holds the commitment itself:
//   draw-committed:<event>:<commitment>   epoch milliseconds, the first time a node published this commitment
//   draw-drawn:<event>:<commitment>       epoch milliseconds, when the draw of this commitment's seed started
// So a commitment swapped in later (another seed) has its own, later `committed_at`, and fails the check;
// the instant of one commitment can never move.
//
// A commitment is published (its instant recorded) at the first GET /draw that shows it, and by the draw job
// within a tick of the room's first pre-queue join (every second; on AWS every minute). The draw's instant is
// recorded by the runner as soon as the store has fixed the entries (DrawStore.startDraw).

import type { SecretStore } from './ports/store.ts';

export interface DrawInstants {
  /** Epoch milliseconds the commitment was first published. */
  committedAtMs: number;
  /** Epoch milliseconds the draw fixed its entries; null before the draw. */
  drawnAtMs: number | null;
}

const committedName = (eventId: string, commitment: string) => `draw-committed:${eventId}:${commitment}`;
const drawnName = (eventId: string, commitment: string) => `draw-drawn:${eventId}:${commitment}`;

export class DrawTimes {
  private readonly store: Pick<SecretStore, 'claimSecret'>;
  private readonly nowMs: () => number;
  /** The instants this process has read or stored (they never change once stored). */
  private readonly known = new Map<string, number>();

  constructor(store: Pick<SecretStore, 'claimSecret'>, nowMs: () => number) {
    this.store = store;
    this.nowMs = nowMs;
  }

  /** The instant stored under `name`, storing now if there is none yet. */
  private async once(name: string): Promise<number> {
    const cached = this.known.get(name);
    if (cached !== undefined) return cached;
    const stored = Number(await this.store.claimSecret(name, String(Math.floor(this.nowMs()))));
    if (!Number.isSafeInteger(stored)) throw new Error(`${name}: not an instant`);
    this.known.set(name, stored);
    return stored;
  }

  /** Marks the commitment published (now, unless it was before); answers when it first was. */
  published(eventId: string, commitment: string): Promise<number> {
    return this.once(committedName(eventId, commitment));
  }

  /** Marks the draw of this commitment started (now, unless it was before); answers when it first was. */
  drawn(eventId: string, commitment: string): Promise<number> {
    return this.once(drawnName(eventId, commitment));
  }
}

/**
 * What the check of a publication's instants finds wrong, or null: the commitment must have been published
 * before the draw fixed its entries, and both instants must be there once the draw is done.
 */
export function drawInstantsProblem(committedAt: unknown, drawnAt: unknown): string | null {
  const committed = typeof committedAt === 'string' ? Date.parse(committedAt) : NaN;
  const drawn = typeof drawnAt === 'string' ? Date.parse(drawnAt) : NaN;
  if (Number.isNaN(committed)) return 'the publication does not say when the commitment was published (committed_at)';
  if (Number.isNaN(drawn)) return 'the publication does not say when the draw took place (drawn_at)';
  if (committed >= drawn) {
    return `the commitment was first published at ${new Date(committed).toISOString()}, not before the draw at ${new Date(drawn).toISOString()}`;
  }
  return null;
}
