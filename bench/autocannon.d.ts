// autocannon ships no types; the benchmark uses only its promise API and these result fields.
declare module 'autocannon' {
  interface Histogram { average: number; total: number; p50: number; p99: number; max: number }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
  }
  export default function autocannon(options: Record<string, unknown>): Promise<Result>;
}
