// Called after reset_initial_state so a CDN stops serving answers from before the reset (VWR invalidated its
// CloudFront distribution). Anteroom POSTs {event_id, paths} to a configured URL — a small function of the
// operator's that calls their CDN's purge API — with an optional bearer token. The reset itself is already
// durable: a failed purge is logged, never turned into a failed reset.

import type { Logger } from 'pino';

/** The cacheable public paths whose answers a reset changes (the keys are kept). */
export const STATE_PATHS = ['/queue_num', '/serving_num', '/waiting_num', '/queue_pos_expiry'];
/** The cacheable public paths (spec: "Caching headers"). */
export const CACHED_PATHS = [...STATE_PATHS, '/public_key', '/jwks.json'];

export interface CdnPurgeOptions {
  url: string;
  token?: string | undefined;
  timeoutMs?: number;
  log: Pick<Logger, 'warn' | 'info'>;
}

export type PurgeHook = (eventId: string) => Promise<void>;

export function cdnPurgeHook(options: CdnPurgeOptions): PurgeHook {
  return async (eventId) => {
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ event_id: eventId, paths: CACHED_PATHS }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
      await response.body?.cancel();
      if (!response.ok) options.log.warn({ event_id: eventId, status: response.status }, 'CDN purge hook refused the purge');
      else options.log.info({ event_id: eventId }, 'CDN purge requested');
    } catch (error) {
      options.log.warn({ event_id: eventId, err: (error as Error).message }, 'CDN purge hook failed');
    }
  };
}
