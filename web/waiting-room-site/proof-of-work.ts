// The waiting room's bot defence, page side (docs/bots.md): when a join is refused with "Proof of work required"
// the page fetches a challenge (GET /challenge), solves it with ALTCHA's solver in Web Workers, one per core (at
// most 4), without asking the visitor anything, and joins again with the solution. Whatever serves this page
// (the site, the gate) gets it with it.

import { solveChallengeWorkers } from 'altcha-lib';
import type { Challenge } from 'altcha-lib/types';

/** The refusals that a (new) solved challenge answers. */
export const PROOF_REFUSALS = ['Proof of work required', 'Invalid proof of work', 'Proof of work already used'];

/** Give up solving after this long: a challenge is valid for minutes, a visitor waits less. */
const SOLVE_TIMEOUT_MS = 60_000;

/** A solved challenge of the room, as the join's `proof_of_work` (base64 of ALTCHA's JSON payload). */
export async function solveProofOfWork(publicApiUrl: string, eventId: string): Promise<string> {
  const response = await fetch(`${publicApiUrl}/challenge?event_id=${encodeURIComponent(eventId)}`);
  if (response.status !== 200) throw new Error(`challenge answered ${response.status}`);
  const challenge = (await response.json()) as Challenge;
  const solution = await solveChallengeWorkers({
    challenge,
    concurrency: Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1)),
    createWorker: () => new Worker(new URL('./pow-worker.ts', import.meta.url), { type: 'module' }),
    timeout: SOLVE_TIMEOUT_MS,
  });
  if (!solution) throw new Error('challenge not solved in time');
  return btoa(JSON.stringify({ challenge, solution }));
}
