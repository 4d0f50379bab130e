// CPU per operation of the embedded store's hot paths, called directly (no HTTP): joins in group-commit batches
// (assignPositions), first claims (getClaimContext + issueTokenIfAbsent, grouped as the service's claims are),
// re-claim reads (getClaimContext) and polls (peekCounters, getCounters). CPU is this process's user + system
// time (process.cpuUsage) over each phase, the median of ROUNDS rounds after a warm-up round.
//
//   node bench/sqlite-store-ops.ts      JOINS (visitors per round, default 20,000), ROUNDS (default 5)
//
// To compare two checkouts (issue 32: the store split into modules must not cost the hot paths anything), copy
// this file into the other one and run the two alternately, one process each, several times:
//   for i in 1 2 3; do for d in <other checkout> .; do (cd $d && node bench/sqlite-store-ops.ts); done; done
// Two stores loaded in ONE process measured unevenly here (whichever ran after the other's rounds was slower,
// a JIT effect), so each checkout gets a process of its own.
//
// The store runs with synchronous=NORMAL so that fsync waits do not stretch the rounds (the CPU measured is the
// same work either way; durability is not what is compared here).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Store } from '../src/domain/ports/store.ts';
import { median } from './proc-stats.ts';

const JOINS = Number(process.env.JOINS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const BATCH = 100;
const POLLS = 200_000;

type StoreClass = new (options: { path: string; synchronous?: 'full' | 'normal' }) => Store;
const Sqlite: StoreClass = (await import('../src/store/sqlite/sqlite-store.ts')).SqliteStore;

const PHASES = ['join', 'first claim', 'claim read', 'peekCounters', 'getCounters'] as const;
type Phase = (typeof PHASES)[number];

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function round(Store: StoreClass, path: string): Promise<Record<Phase, number>> {
  const store = new Store({ path, synchronous: 'normal' });
  const out = {} as Record<Phase, number>;
  try {
    const ids = Array.from({ length: JOINS }, () => randomUUID());
    let started = cpuMicros();
    for (let i = 0; i < ids.length; i += BATCH) {
      await store.assignPositions('E', ids.slice(i, i + BATCH).map((requestId) => ({ requestId, entryTime: 1 })));
    }
    out.join = (cpuMicros() - started) / JOINS;
    await store.incrementServing('E', JOINS, 1);

    started = cpuMicros();
    for (let i = 0; i < ids.length; i += BATCH) {
      await Promise.all(
        ids.slice(i, i + BATCH).map(async (requestId) => {
          const context = await store.getClaimContext('E', requestId);
          if (!context) throw new Error('no position');
          const record = { requestId, position: context.position, iat: 2, nbf: 2, exp: 4_000_000_000, iss: 'bench', kid: 'k', status: 0 as const, signatures: 'a.b.c' };
          const result = await store.issueTokenIfAbsent('E', record);
          if (result.outcome !== 'issued') throw new Error(result.outcome);
        }),
      );
    }
    out['first claim'] = (cpuMicros() - started) / JOINS;

    started = cpuMicros();
    for (const requestId of ids) if (!(await store.getClaimContext('E', requestId))?.token) throw new Error('no token set');
    out['claim read'] = (cpuMicros() - started) / JOINS;

    await store.getCounters('E');
    started = cpuMicros();
    let queue = 0;
    for (let i = 0; i < POLLS; i++) queue += store.peekCounters!('E')!.queue;
    out.peekCounters = (cpuMicros() - started) / POLLS;
    started = cpuMicros();
    for (let i = 0; i < POLLS; i++) queue += (await store.getCounters('E')).queue;
    out.getCounters = (cpuMicros() - started) / POLLS;
    if (queue !== 2 * POLLS * JOINS) throw new Error('counters');
  } finally {
    await store.close();
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'anteroom-store-ops-'));
try {
  const results = Object.fromEntries(PHASES.map((p) => [p, [] as number[]])) as Record<Phase, number[]>;
  // A warm-up round (code compiled), not counted.
  await round(Sqlite, join(dir, 'warm.db'));
  for (let r = 0; r < ROUNDS; r++) {
    const figures = await round(Sqlite, join(dir, `round-${r}.db`));
    for (const p of PHASES) results[p].push(figures[p]);
  }
  const load = (await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`SqliteStore hot paths, µs CPU per operation, median of ${ROUNDS} rounds × ${JOINS} visitors (${process.cwd()}, Node ${process.version}; load average ${load})`);
  for (const p of PHASES) console.log(`  ${p.padEnd(13)} ${median(results[p]).toFixed(2).padStart(6)}   (rounds ${results[p].map((v) => v.toFixed(2)).join(', ')})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
