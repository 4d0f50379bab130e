// The sample protected API (spec/integrations.md §4): /store/search, /store/checkout and /store/layaway answer
// 200 {"result": "Success", …} only to a visitor holding a valid access token of one of this server's events,
// checked by the authorizer exactly as a site behind the waiting room would check it (the anteroom-authorizer package). It is
// the site the waiting-room page buys from, and the reference for integrators.
//
// Two things differ from a separate site, both because the shop lives inside the waiting room's own process:
// - the issuer is this server's public URL, known only once it listens, so it is read lazily per event;
// - the event key is fetched from this server in-process (Fastify inject) rather than over the network, so
//   the shop works whatever --public-url says (a CDN address, a proxy the server cannot reach itself).

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extractToken, fastifyAuthorizer } from 'anteroom-authorizer';
import { Errors } from '../domain/errors.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import { mountRoutes } from '../http/route-table.ts';

export const SHOP_BASE_PATH = '/store';
export const SHOP_OPERATIONS = ['search', 'checkout', 'layaway'] as const;
/**
 * The cookie the gate sets with the access token (src/gate/cookies.ts, docs/gate.md#cookies): the store also
 * takes the token from it, so a browser admitted by the gate shops with no script at all.
 */
export const GATE_TOKEN_COOKIE = 'anteroom_token';

export interface ShopApiOptions {
  /** The server's events (`config.events`): a token of any of them is accepted. */
  events: readonly Pick<RoomSettings, 'event_id' | 'issuer'>[];
  /** This server's public base URL (the default token issuer); called at request time, after listen. */
  publicUrl: () => string;
  /** The public API key, when the public API requires one (for the in-process key fetch). */
  publicApiKey?: string | undefined;
  /** Milliseconds since the epoch (tests). Default Date.now. */
  clock?: () => number;
}

type Guard = ReturnType<typeof fastifyAuthorizer>;

/** A Fastify plugin (for `StartOptions.plugins`) mounting the sample store under /store. */
export function shopApi(options: ShopApiOptions): (app: FastifyInstance) => void {
  const events = new Map(options.events.map((event) => [event.event_id, event]));
  const fallbackEvent = options.events[0]?.event_id;
  if (fallbackEvent === undefined) throw new Error('shopApi needs at least one event');

  return (app) => {
    const guards = new Map<string, Guard>();
    const inProcessFetch: typeof fetch = async (input) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const answer = await app.inject({
        method: 'GET',
        url: `${url.pathname}${url.search}`,
        headers: options.publicApiKey ? { 'x-api-key': options.publicApiKey } : {},
      });
      return new Response(answer.body, { status: answer.statusCode, headers: { 'content-type': 'application/json' } });
    };

    /** The guard of one event, built on first use (the issuer is known only once the server listens). */
    function guardFor(eventId: string): Guard | undefined {
      let guard = guards.get(eventId);
      if (guard) return guard;
      const publicUrl = options.publicUrl();
      if (!publicUrl) return undefined;
      guard = fastifyAuthorizer({
        publicKeyUrl: `${publicUrl}/public_key`,
        eventId,
        issuer: events.get(eventId)?.issuer ?? publicUrl,
        fetch: inProcessFetch,
        cookieName: GATE_TOKEN_COOKIE,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      guards.set(eventId, guard);
      return guard;
    }

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      // CORS open, refusals included (a page on another origin must be able to read why it was refused).
      reply.header('access-control-allow-origin', '*');
      // Preflights are never authenticated: the browser sends them without the Authorization header.
      if (request.method === 'OPTIONS') return undefined;
      // VWR's sample API served one event; this one serves them all, and the token says which it is for. The
      // claim is only a routing hint: the chosen event's guard verifies signature, audience and issuer.
      const claimed = audienceOf(extractToken(request.headers, { cookieName: GATE_TOKEN_COOKIE }));
      const guard = guardFor(claimed !== undefined && events.has(claimed) ? claimed : fallbackEvent);
      if (!guard) {
        const startingUp = Errors.storeApiStartingUp();
        reply.code(startingUp.status).headers(startingUp.headers).header('cache-control', 'no-store');
        return reply.send({ error: startingUp.message });
      }
      return guard(request, reply);
    });

    const receipt = async (request: FastifyRequest) => {
      const claims = request.waitingRoom!;
      return {
        status: 200 as const,
        body: { result: 'Success', event_id: claims.aud, request_id: claims.sub, queue_position: claims.queue_position },
      };
    };
    // GET as VWR's sample site calls it, POST as a real store would; OPTIONS and 405 come with mountRoutes.
    mountRoutes(
      app,
      [
        ...SHOP_OPERATIONS.flatMap((operation) => [
          { method: 'GET' as const, url: `${SHOP_BASE_PATH}/${operation}`, handler: receipt },
          { method: 'POST' as const, url: `${SHOP_BASE_PATH}/${operation}`, handler: receipt },
        ]),
        // The store's front page, for a browser the gate let in (the demo of `npm start`): no script, a form.
        { method: 'GET' as const, url: `${SHOP_BASE_PATH}/`, handler: storeFront },
      ],
      // The body is not used (the sample sells one widget); no cacheable route.
      { parseBody: async () => undefined, pollTtl: 0 },
    );
  };
}

async function storeFront(request: FastifyRequest, reply: FastifyReply): Promise<{ status: 200; body: string }> {
  const claims = request.waitingRoom!;
  reply.type('text/html; charset=utf-8');
  return {
    status: 200,
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sample store</title></head><body>
<h1 id="store-front">Sample store: you are in</h1>
<p>The waiting room let you in (room <code>${escapeHtml(claims.aud)}</code>, place ${claims.queue_position}).
The access token came in the <code>${GATE_TOKEN_COOKIE}</code> cookie, checked by this store with the authorizer.</p>
<form method="post" action="${SHOP_BASE_PATH}/checkout"><button type="submit">Buy a widget</button></form>
</body></html>`,
  };
}

function escapeHtml(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** The `aud` of a JWT, read without verifying it (to pick the event whose key will verify it). */
function audienceOf(token: string | undefined): string | undefined {
  const payload = token?.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: unknown };
    return typeof claims.aud === 'string' ? claims.aud : undefined;
  } catch {
    return undefined;
  }
}
