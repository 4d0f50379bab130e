// Solving the bot defence's proof of work from a test, as a bot at full CPU would: GET /challenge, ALTCHA's solver
// (altcha-lib, node:crypto), and the join's `proof_of_work` payload.

import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { Challenge } from 'altcha-lib/types';

/** The challenge a node answers for the room (asserting a 200). */
export async function fetchChallenge(baseUrl: string, eventId: string, headers: Record<string, string> = {}): Promise<Challenge> {
  const response = await fetch(`${baseUrl}/challenge?event_id=${encodeURIComponent(eventId)}`, { headers });
  if (response.status !== 200) throw new Error(`GET /challenge answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Challenge;
}

/** The `proof_of_work` of a join: the challenge with its solution, base64 JSON. */
export async function solve(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error('challenge not solved');
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

export async function solvedProof(baseUrl: string, eventId: string, headers: Record<string, string> = {}): Promise<string> {
  return solve(await fetchChallenge(baseUrl, eventId, headers));
}
