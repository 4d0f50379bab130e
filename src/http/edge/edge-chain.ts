// The edge chain: what every request meets at the node:http level, before the polling fast path and Fastify
// answer it. Concerns that must hold for every answer, whoever makes it (request metrics, the public API key;
// later rate limits, proof of work, analytics), live here once, as small named steps in the style of traefik's
// middlewares: each does one job and can be tested alone. A step either answers the request, which ends the
// chain, or passes it on to the rest of the chain (`next`), and may look at the answer once `next` returns.
// What no step answers goes to the chain's last handler (Fastify on a node; the gate's proxy later).
//
// The chain runs for every poll, thousands a second, so it allocates nothing per request: the links between
// the steps are made once, when the chain is built, and a step keeps its state in itself, not in closures
// made per request.

import type { IncomingMessage, ServerResponse } from 'node:http';

export type EdgeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface EdgeStep {
  /** What the step is for, in a few words (for tests and whoever reads a stack trace). */
  readonly name: string;
  /**
   * Answers the request, or passes it on by calling `next` once, leaving the response untouched. When `next`
   * returns, a later step may have answered already (`res.writableEnded`), or the last handler may still be
   * answering (Fastify answers asynchronously).
   */
  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void;
}

/**
 * The steps run in the order given, then `last`. A step that has nothing to do in this configuration is
 * given as undefined (e.g. the API key step when no key is set) and left out, so it costs nothing.
 */
export function edgeChain(steps: readonly (EdgeStep | undefined)[], last: EdgeHandler): EdgeHandler {
  let rest = last;
  for (const step of steps.toReversed()) {
    if (step === undefined) continue;
    const next = rest;
    rest = (req, res) => step.handle(req, res, next);
  }
  return rest;
}
