// `anteroom serve --workers N`: one machine, N worker processes (node:cluster) sharing one listening port.
// Each worker is a whole, stateless node (its own hot-read cache and job scheduler) on the shared store, so
// only a shared store (Redis) will do. The primary process only starts the workers, prints the banner once
// every worker listens, replaces a worker that dies, and on SIGTERM/SIGINT stops them gracefully (each
// answers its requests in flight) before exiting.
//
// Port 0 works as with one process: cluster workers that listen on port 0 share the one random port the
// primary picks for the first of them, and report it back.

import cluster, { type Worker } from 'node:cluster';
import type { ServerConfig } from '../config/config.ts';
import { ConfigErrors } from '../domain/errors.ts';
import { describeStoreLocation, isSharedStore } from '../compose/open-store.ts';

export interface NodeUrls {
  publicUrl: string;
  privateUrl: string;
}

interface ListeningMessage extends NodeUrls {
  type: 'anteroom:listening';
}

const isListeningMessage = (message: unknown): message is ListeningMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'anteroom:listening';

/** The most worker processes accepted: more than a few per core only adds memory and Redis connections. */
export const MAX_WORKERS = 64;

/** How long a stopping worker may take to answer its requests in flight before it is killed. */
const STOP_GRACE_MS = 30_000;
/** A worker that dies is replaced after this delay, so a worker crashing at once does not spin. */
const RESPAWN_DELAY_MS = 1000;

/** True when this process should start workers instead of serving itself. */
export function shouldStartWorkers(config: Pick<ServerConfig, 'workers'>): boolean {
  return (config.workers ?? 1) > 1 && cluster.isPrimary;
}

/** True in a worker process started by runPrimary. */
export const isWorkerProcess = (): boolean => cluster.isWorker;

/** Refuses --workers N > 1 on a store that only one process can use. */
export function checkWorkersStore(config: Pick<ServerConfig, 'workers' | 'store'>): void {
  if ((config.workers ?? 1) <= 1 || isSharedStore(config)) return;
  const store = describeStoreLocation(config);
  const why =
    config.store.kind === 'memory'
      ? 'an in-memory store lives inside one process, so workers would each have their own queue'
      : 'the embedded SQLite store has one writer, the process that opened it';
  throw ConfigErrors.option(
    `--workers ${config.workers} needs a store shared by every process, such as --store redis://host:6379 ` +
      `(${store}: ${why}). Use --workers 1, or run one process per machine.`,
  );
}

/** In a worker: tells the primary this worker is listening, and stops it if the primary goes away. */
export function reportListening(urls: NodeUrls, stop: (reason: string) => void): void {
  const message: ListeningMessage = { type: 'anteroom:listening', publicUrl: urls.publicUrl, privateUrl: urls.privateUrl };
  process.send?.(message);
  // The primary owns the listening socket: without it this worker receives no more requests.
  process.once('disconnect', () => stop('primary exited'));
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** Lines in the shape of the workers' own (pino) log lines, so one log pipeline reads both. */
function logger(minimum: string) {
  const threshold = LEVELS[minimum] ?? LEVELS.info!;
  return (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => {
    const value = LEVELS[level]!;
    if (value < threshold) return;
    process.stdout.write(`${JSON.stringify({ level: value, time: Date.now(), pid: process.pid, role: 'primary', ...fields, msg })}\n`);
  };
}

/**
 * Starts `count` workers running this same command, calls `onListening` once all of them listen, and keeps
 * `count` workers running until SIGTERM/SIGINT. Resolves once listening; exits the process itself.
 */
export async function runPrimary(options: {
  count: number;
  logLevel: string;
  onListening: (urls: NodeUrls) => void;
}): Promise<void> {
  const { count } = options;
  const log = logger(options.logLevel);
  let stopping = false;
  let started = false;
  const workers = new Set<Worker>();
  const pendingRespawns = new Set<NodeJS.Timeout>();

  const stopAll = (signal: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    for (const timer of pendingRespawns) clearTimeout(timer);
    log('info', 'stopping workers: each answers its requests in flight', { signal });
    const force = setTimeout(() => {
      log('warn', 'workers still running after the grace period: killing them');
      for (const worker of workers) worker.process.kill('SIGKILL');
    }, STOP_GRACE_MS);
    force.unref();
    for (const worker of workers) worker.process.kill('SIGTERM');
    const finish = () => process.exit(exitCode);
    if (workers.size === 0) finish();
    else {
      cluster.on('exit', (worker) => {
        workers.delete(worker);
        if (workers.size === 0) finish();
      });
    }
  };
  process.on('SIGTERM', () => stopAll('SIGTERM', 0));
  process.on('SIGINT', () => stopAll('SIGINT', 0));

  let listening = 0;
  let resolveListening!: (urls: NodeUrls) => void;
  const allListening = new Promise<NodeUrls>((resolve) => (resolveListening = resolve));

  const fork = () => {
    const worker = cluster.fork();
    workers.add(worker);
    let workerListening = false;
    worker.on('message', (message: unknown) => {
      if (!isListeningMessage(message) || workerListening) return;
      workerListening = true;
      if (started) {
        log('info', 'replacement worker listening', { worker: worker.process.pid });
        return;
      }
      listening += 1;
      if (listening === count) resolveListening({ publicUrl: message.publicUrl, privateUrl: message.privateUrl });
    });
    worker.on('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      if (!started) {
        // A worker that cannot start (bad configuration, store unreachable) said why on stderr.
        log('error', 'a worker exited before listening: stopping', { worker: worker.process.pid, code, signal });
        stopAll('worker failed', 1);
        return;
      }
      log('error', 'worker exited: starting another', { worker: worker.process.pid, code, signal });
      const timer = setTimeout(() => {
        pendingRespawns.delete(timer);
        if (!stopping) fork();
      }, RESPAWN_DELAY_MS);
      pendingRespawns.add(timer);
    });
  };

  for (let i = 0; i < count; i++) fork();
  const urls = await allListening;
  if (stopping) return;
  started = true;
  options.onListening(urls);
}
