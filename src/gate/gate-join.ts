// How a visitor without a place joins through the gate (docs/bots.md, docs/gate.md "Bot defence"): the public
// API's own join, QueueService.assignQueueNum, with what that door gives it — the client's IP as the
// listener names it (--trust-proxy) and the proof of work the page solved — so the room's bot defence (per-client
// limits, flood detection, `challenge: always|auto`, the infinite queue) judges both doors alike, and so does the
// server-wide --writes-per-client-per-minute. A refusal becomes an answer the gate can show: a challenge to solve,
// a limit to wait out, or a closed room.
//
// The proof of work comes in the `Anteroom-Proof-Of-Work` header of a request to the URL the visitor waits at (the
// page asks the same URL as it does for its polls); the challenge itself from GET /_anteroom/challenge, on the
// site's own host.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ContractError } from '../domain/errors.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';

/** The header carrying a solved challenge (ALTCHA's payload, base64 JSON: what a public-API join sends as `proof_of_work`). */
export const PROOF_OF_WORK_HEADER = 'anteroom-proof-of-work';

/** Where the page fetches a challenge: under the gate's own path, on the site's host. */
export const GATE_CHALLENGE_PATH = '/_anteroom/challenge';

export interface GateJoinDeps {
  room: Pick<WaitingRoom, 'queue' | 'rooms'>;
  /** --writes-per-client-per-minute (0 or absent: no limit), as on the public API. */
  writesPerClientPerMinute?: number | undefined;
}

/** A join refused by the room: why, in the terms the gate answers with. */
export type JoinRefusal =
  | { kind: 'challenge'; message: string }
  | { kind: 'limited'; message: string; retryAfter: string }
  | { kind: 'closed'; message: string }
  /** Before the pre-queue opens: no place yet; the page counts down to the opening and asks again (issue 33). */
  | { kind: 'before'; message: string };

/** The join's answer: the place's request ID, or the refusal. */
export type GateJoin = { requestId: string } | { refused: JoinRefusal };

/** The refusals that a (new) solved challenge answers (the page's PROOF_REFUSALS). */
const PROOF_REFUSALS = new Set(['ANTEROOM_ERR_PROOF_OF_WORK_REQUIRED', 'ANTEROOM_ERR_PROOF_OF_WORK_INVALID', 'ANTEROOM_ERR_PROOF_OF_WORK_USED']);

/**
 * A join of the room for the visitor who sent `request`, through the one join path of every door, with the
 * Idempotency-Key the gate keeps for this visitor in its join cookie (visitor-queue.ts): a join refused with a 5xx
 * after it took effect is found again by the visitor's next request, not made twice.
 */
export async function joinThroughGate(deps: GateJoinDeps, request: FastifyRequest, eventId: string, idempotencyKey: string): Promise<GateJoin> {
  try {
    await limitWrite(deps, request);
    const joined = await deps.room.queue.assignQueueNum(eventId, { client: request.ip, proofOfWork: proofOf(request), idempotencyKey });
    if (joined.status !== 200) throw new Error('join answered 202');
    return { requestId: joined.body.api_request_id };
  } catch (error) {
    const refused = refusalOf(error);
    if (refused) return { refused };
    throw error;
  }
}

/** GET /_anteroom/challenge?event_id=E: a challenge of a gated room, as GET /challenge of the public API answers it. */
export function gateChallengeRoute(scope: FastifyInstance, deps: GateJoinDeps): void {
  scope.get('/challenge', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const eventId = (request.query as Record<string, unknown>).event_id;
    const room = deps.room.rooms.roomSettings(eventId);
    if (!room?.gate) return reply.code(404).send({ error: 'No waiting room protects this URL' });
    try {
      await limitWrite(deps, request);
      const answer = await deps.room.queue.challenge(room.event_id);
      return reply.send(answer.body);
    } catch (error) {
      if (error instanceof ContractError && error.status < 500) return sendContractError(reply, error);
      throw error;
    }
  });
}

async function limitWrite(deps: GateJoinDeps, request: FastifyRequest): Promise<void> {
  const perMinute = deps.writesPerClientPerMinute ?? 0;
  if (perMinute > 0) await deps.room.queue.limitPublicWrite(request.ip, perMinute);
}

function proofOf(request: FastifyRequest): string | undefined {
  const value = request.headers[PROOF_OF_WORK_HEADER];
  return typeof value === 'string' ? value : undefined;
}

function refusalOf(error: unknown): JoinRefusal | undefined {
  if (!(error instanceof ContractError)) return undefined;
  if (PROOF_REFUSALS.has(error.code)) return { kind: 'challenge', message: error.message };
  if (error.status === 429) return { kind: 'limited', message: error.message, retryAfter: error.headers['retry-after'] ?? '60' };
  if (error.code === 'ANTEROOM_ERR_ROOM_NOT_OPEN_YET') return { kind: 'before', message: error.message };
  // Closed, an enqueue key required (the gate has none to give): the room takes no join from here.
  if (error.status === 403) return { kind: 'closed', message: error.message };
  return undefined;
}

/** A contract error in the project's one shape, {"error": message}, with its headers (Retry-After). */
function sendContractError(reply: FastifyReply, error: ContractError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).send({ error: error.message });
}
