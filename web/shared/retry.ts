// When and how the pages retry a call. Only failures that say "try again later" are retried — a network error,
// 429 and 5xx — with capped exponential back-off and jitter, so thousands of pages that failed together do not
// come back together. Every other answer is final. VWR's pages retried any non-200, POSTs included, and each
// retried join created one more queue entry: a join (POST /assign_queue_num) is therefore never retried here;
// the visitor presses Reserve again.

export interface BackoffPolicy {
  /** Delay ceiling of the first retry. */
  baseMs: number;
  /** No delay ceiling grows beyond this. */
  capMs: number;
  /** Attempts in all, the first included (Infinity: until it succeeds). */
  maxAttempts: number;
}

/** For one-shot actions the visitor is waiting for (claiming the token, the purchase). */
export const ACTION_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 8_000, maxAttempts: 6 };
/** For polling loops: never give up, but never poll a struggling server faster than this allows. */
export const POLL_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 30_000, maxAttempts: Infinity };

/** A Retry-After larger than this is not honoured as such (a page waiting an hour looks broken). */
const MAX_RETRY_AFTER_MS = 60_000;

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * The delay before retry number `retry` (0 = first retry): "equal jitter", uniformly between half and all of
 * min(cap, base · 2^retry), so delays grow but simultaneous failures spread out.
 */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(retry, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(response: Response, nowMs: number = Date.now()): number | undefined {
  const value = response.headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - nowMs;
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

/** The delay before the next attempt after `response` (or a network error), honouring Retry-After. */
export function nextDelay(retry: number, policy: BackoffPolicy, response?: Response): number {
  const backoff = backoffDelay(retry, policy);
  const asked = response ? retryAfterMs(response) : undefined;
  return asked === undefined ? backoff : Math.max(backoff, asked);
}

export interface RetryHooks {
  /** Called before each wait, e.g. to show "retrying in 4 s". */
  onRetry?: (info: { retry: number; delayMs: number; reason: string }) => void;
  sleep?: (ms: number) => Promise<void>;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `send` (which must build a fresh request each time: SigV4 signatures carry a date) until it yields a
 * final answer. Resolves with the last response, retryable or not, once attempts run out; rejects with the
 * last network error if every attempt failed that way.
 */
export async function fetchWithRetry(
  send: () => Promise<Response>,
  policy: BackoffPolicy,
  hooks: RetryHooks = {},
): Promise<Response> {
  const wait = hooks.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    let response: Response | undefined;
    let failure: unknown;
    try {
      response = await send();
      if (!isRetryableStatus(response.status)) return response;
    } catch (error) {
      failure = error;
    }
    if (attempt >= policy.maxAttempts) {
      if (response) return response;
      throw failure;
    }
    const delayMs = nextDelay(attempt - 1, policy, response);
    hooks.onRetry?.({ retry: attempt, delayMs, reason: response ? `HTTP ${response.status}` : 'network error' });
    await response?.body?.cancel().catch(() => undefined);
    await wait(delayMs);
  }
}

/** The `error` message of a JSON error body, else the status text. Never throws. */
export async function errorMessage(response: Response): Promise<string> {
  let message = '';
  try {
    const body = (await response.clone().json()) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') message = body.error;
    else if (typeof body.message === 'string') message = body.message;
  } catch {
    // Not JSON: fall back to the status line.
  }
  return `${response.status} ${message || response.statusText || 'error'}`.trim();
}
