// The edge chain: what every request meets at the node:http level, before the polling fast path and Fastify
// answer it. Concerns that must hold for every answer, whoever makes it (request metrics, the public API key;
// later rate limits, proof of work, analytics), live here once, as small named steps in the style of traefik's
// middlewares: each does one job and can be tested alone. A step either answers the request and stops the
// chain, or passes it on; the request that no step answers goes to the chain's last handler (Fastify on a
// node; the gate's proxy later).
//
// The chain runs for every poll, thousands a second: it allocates nothing per request (the steps are fixed
// when the chain is built, run by index, and a step's state lives in the step, not in per-request closures).

import type { IncomingMessage, ServerResponse } from 'node:http';

export interface EdgeStep {
  /** What the step is for, one or two words (shown in tests and when debugging the chain). */
  readonly name: string;
  /**
   * Answers the request and returns true, which ends the chain; or returns false, leaving the response
   * untouched, to pass the request on to the next step.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

export type EdgeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The steps run in the order given, then `last`. A step that has nothing to do in this configuration is
 * given as undefined (e.g. the API key step when no key is set) and left out, so it costs nothing per
 * request.
 */
export function edgeChain(steps: readonly (EdgeStep | undefined)[], last: EdgeHandler): EdgeHandler {
  const active = steps.filter((step): step is EdgeStep => step !== undefined);
  const count = active.length;
  return (req, res) => {
    for (let i = 0; i < count; i++) {
      if ((active[i] as EdgeStep).handle(req, res)) return;
    }
    last(req, res);
  };
}
