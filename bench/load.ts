// Load generator, run as its own process (pinned to its own core by bench/run.ts): one autocannon run
// described by a JSON argument; prints the summary as one JSON line.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

interface LoadSpec {
  url: string;
  connections: number;
  durationSec?: number;
  /** Stop after this many requests instead of a duration. */
  amount?: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** Cycle the request body through these request IDs (file with one ID per line). */
  claimIdsFile?: string;
  /** Cycle the request path through these (file with one path per line), e.g. /queue_num of many visitors. */
  pathsFile?: string;
  eventId?: string;
  /** At most this many requests per second over all connections (default: as fast as answered). */
  rate?: number;
  /** Seconds before a request counts as timed out (autocannon's default 10; a busy shared machine needs more). */
  timeoutSec?: number;
}

const spec = JSON.parse(process.argv[2] as string) as LoadSpec;
const ids = spec.claimIdsFile ? readFileSync(spec.claimIdsFile, 'utf8').trim().split('\n') : [];
const paths = spec.pathsFile ? readFileSync(spec.pathsFile, 'utf8').trim().split('\n') : [];
let next = 0;

const started = performance.now();
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  ...(spec.amount ? { amount: spec.amount } : { duration: spec.durationSec ?? 10 }),
  ...(spec.rate ? { overallRate: spec.rate } : {}),
  ...(spec.timeoutSec ? { timeout: spec.timeoutSec } : {}),
  method: spec.method ?? 'GET',
  headers: { 'content-type': 'application/json', ...spec.headers },
  ...(spec.body ? { body: spec.body } : {}),
  ...(ids.length > 0
    ? {
        requests: [
          {
            setupRequest: (request: Record<string, unknown>) => ({
              ...request,
              body: JSON.stringify({ event_id: spec.eventId, request_id: ids[next++ % ids.length] }),
            }),
          },
        ],
      }
    : paths.length > 0
      ? { requests: [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, path: paths[next++ % paths.length] }) }] }
      : {}),
});

const elapsedMs = performance.now() - started;
process.stdout.write(
  `${JSON.stringify({
    // Answers over the run's wall-clock time, measured here. autocannon's requests.average is the mean of
    // whole-second buckets and its duration is counted in whole seconds (plus its start-up), so a run of a fixed
    // amount read as 15,000 claims / 3 s or / 2 s whatever it took in between.
    rps: result.requests.total / (elapsedMs / 1000),
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    durationSec: result.duration,
  })}\n`,
);
