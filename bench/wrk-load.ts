// The second load generator: Debian's wrk (C, epoll), beside autocannon (bench/load.ts), so that a floor measured
// with one is checked with the other (issue 37: a floor is only a floor if two independent clients agree on it).
// Runs wrk pinned to `cpu`, one thread, `connections` keep-alive connections; GETs cycle through `paths` (a
// file, one path a line) or POSTs send `body`, or cycle `{"event_id","request_id"}` bodies through `claimIdsFile`.
// Returns the same summary as runLoad (bench/load-runner.ts).

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pinnedCommand } from '../test/support/child-node.ts';
import type { LoadResult } from './load-runner.ts';

export const WRK = '/usr/bin/wrk';

export interface WrkSpec {
  url: string;
  connections: number;
  durationSec: number;
  method?: 'GET' | 'POST';
  body?: string;
  /** GET: cycle the request path through these (file, one path a line); the url's path otherwise. */
  pathsFile?: string;
  /** POST: cycle the body {"event_id": eventId, "request_id": …} through these request IDs (file, one a line). */
  claimIdsFile?: string;
  eventId?: string;
}

const lua = (spec: WrkSpec): string => {
  const lines = (file: string) => `local items = {}\nfor line in io.lines(${JSON.stringify(file)}) do items[#items + 1] = line end\nlocal i = 0\n`;
  const headers = `local headers = { ["content-type"] = "application/json" }\n`;
  if (spec.pathsFile) {
    return `${lines(spec.pathsFile)}${headers}request = function()\n  i = i % #items + 1\n  return wrk.format("GET", items[i], headers)\nend\n`;
  }
  if (spec.claimIdsFile) {
    return (
      `${lines(spec.claimIdsFile)}${headers}request = function()\n  i = i % #items + 1\n` +
      `  return wrk.format("POST", nil, headers, '{"event_id":"${spec.eventId ?? 'Sample'}","request_id":"' .. items[i] .. '"}')\nend\n`
    );
  }
  return `${headers}request = function()\n  return wrk.format(${JSON.stringify(spec.method ?? 'GET')}, nil, headers, ${spec.body ? `'${spec.body}'` : 'nil'})\nend\n`;
};

/** Milliseconds from wrk's latency text (e.g. "812.00us", "3.21ms", "1.02s"). */
function ms(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (!match) return 0;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

export async function runWrk(spec: WrkSpec, cpu: number | undefined): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    writeFileSync(script, lua(spec));
    const [command, argv] = pinnedCommand(cpu, [
      WRK, '-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '--latency', '-s', script, spec.url,
    ]);
    const { stdout } = await promisify(execFile)(command, argv, { encoding: 'utf8' });
    const total = Number(/(\d+) requests in ([\d.]+)(ms|s)/.exec(stdout)?.[1] ?? 0);
    const seconds = (() => {
      const m = /\d+ requests in ([\d.]+)(ms|s)/.exec(stdout);
      return m ? Number(m[1]) / (m[2] === 'ms' ? 1000 : 1) : spec.durationSec;
    })();
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    const latency = (p: string) => ms(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1]);
    return {
      rps: total / seconds,
      total,
      ok: total - non2xx,
      non2xx,
      errors: errors ? Number(errors[1]) + Number(errors[2]) + Number(errors[3]) : 0,
      timeouts: errors ? Number(errors[4]) : 0,
      p50: latency('50'),
      p99: latency('99'),
      max: ms(/Latency\s+\S+\s+\S+\s+(\S+)/.exec(stdout)?.[1]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
