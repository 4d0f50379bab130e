// The Redis store's connection: one client (a server, a Sentinel-named primary or a Cluster) with its scripts
// and write fence, every call bounded in time (see "Failure behaviour" at the top of redis-store.ts), and the
// client's whole life: when it ends for good (its status "end": ioredis gives up reconnecting, e.g. when
// Sentinel's +switch-master arrives while it is reconnecting, issue 35), a new client is built with the same
// factory, so a node never stays down after a failover. Calls made in between wait for the new client like
// for a reconnection (at most readyTimeoutMs) and are never sent to the old one.

import type { Cluster, Redis } from 'ioredis';
import { StoreUnavailableError } from '../../domain/ports/store.ts';
import { toStoreError } from './clients.ts';
import { RedisScripts, type RedisClient } from './scripts.ts';
import { WriteFenceClock } from './write-fence.ts';

/**
 * The write fence closes this long before the command timeout: a script that started just before its
 * deadline has this long to finish and have its reply read before the caller gives up (see call()).
 */
const FENCE_MARGIN_MS = 300;
/** A client that ended is replaced after this delay, doubled for each replacement that never got ready (≤ 1 s). */
const FIRST_REPLACEMENT_DELAY_MS = 50;
const MAX_REPLACEMENT_DELAY_MS = 1000;

export interface ConnectionOptions {
  /** The store's description (URL without credentials), for errors. */
  description: string;
  /** The first client. */
  client: RedisClient;
  /** Builds a client like the first one, to replace a client that ended; without it an ended client stays ended. */
  createClient?: (() => RedisClient) | undefined;
  /** Close the client on close(). */
  ownsClient: boolean;
  readyTimeoutMs: number;
  commandTimeoutMs: number;
  /** With count > 0, writes (and the reads that answer visitors) wait for `count` replicas; see replica-waits.ts. */
  replicas?: { count: number; timeoutMs: number } | undefined;
}

export class RedisConnection {
  client!: RedisClient;
  scripts!: RedisScripts;
  private fenceClock!: WriteFenceClock;
  /** How many clients this connection has built to replace one that ended (for /readyz and tests). */
  replacements = 0;
  private readonly options: ConnectionOptions;
  private readonly description: string;
  /** Callers waiting for a client to be ready (any client: the current one may be replaced meanwhile). */
  private readyWaiters: (() => void)[] = [];
  /** Set when a wait for the connection timed out; cleared when the client is ready again. */
  private unreachable = false;
  /** One server (not a Cluster): a command timed out and nothing was answered since; see probe(). */
  private hung = false;
  /** The client's last connection error (e.g. WRONGPASS), to say why Redis is unavailable. */
  private lastConnectionError: string | null = null;
  private closed = false;
  private replacing: NodeJS.Timeout | null = null;
  private failedReplacements = 0;

  constructor(options: ConnectionOptions) {
    this.options = options;
    this.description = options.description;
    this.attach(options.client);
  }

  private attach(client: RedisClient): void {
    this.client = client;
    const budgetMs = this.options.commandTimeoutMs - FENCE_MARGIN_MS;
    // A client passed in (a Cluster) has its own command timeout; the fence assumes the default or the given one.
    this.fenceClock = new WriteFenceClock(client, { budgetMs });
    this.scripts = new RedisScripts(client, { fence: () => this.fenceClock.fence(), replicas: this.options.replicas });
    const fenceClock = this.fenceClock;
    client.on('ready', () => {
      if (client !== this.client) return;
      this.unreachable = false;
      this.hung = false;
      this.lastConnectionError = null;
      this.failedReplacements = 0;
      // A reconnection may reach another machine (a Sentinel failover): measure its clock before writing.
      if (!this.isCluster()) fenceClock.forget();
      const waiters = this.readyWaiters;
      this.readyWaiters = [];
      for (const resolve of waiters) resolve();
    });
    client.on('error', (error: Error) => {
      if (client === this.client) this.lastConnectionError = error.message;
    });
    client.on('end', () => {
      if (client === this.client) this.scheduleReplacement();
    });
  }

  /** The client ended for good: build a new one (after a short, growing delay), unless the store closes. */
  private scheduleReplacement(): void {
    if (this.closed || !this.options.createClient || this.replacing) return;
    const delay = Math.min(FIRST_REPLACEMENT_DELAY_MS * 2 ** this.failedReplacements, MAX_REPLACEMENT_DELAY_MS);
    this.failedReplacements += 1;
    this.replacing = setTimeout(() => {
      this.replacing = null;
      if (this.closed || this.client.status !== 'end') return;
      const old = this.client;
      this.attach((this.options.createClient as () => RedisClient)());
      this.replacements += 1;
      old.removeAllListeners('ready');
      old.disconnect();
      // A client that ends again before it was ever ready is replaced again, later.
      if (this.client.status === 'end') this.scheduleReplacement();
    }, delay);
    this.replacing.unref?.();
  }

  /** The write fence argument for a script sent now on the current client (./write-fence.ts). */
  fence(): string {
    return this.fenceClock.fence();
  }

  isCluster(): boolean {
    return (this.client as Cluster).isCluster === true;
  }

  get status(): string {
    return this.client.status;
  }

  /**
   * Runs one Redis call once the client is connected, turning connection trouble into StoreUnavailableError.
   * Getting ready — the wait for a (re)connection and, after one, the measure of the server's clock (up to three
   * TIME round trips, each bounded only by the client's own command timeout) — has readyTimeoutMs in all, so a
   * call takes readyTimeoutMs + commandTimeoutMs at most (issue 35: after a Sentinel failover on a loaded
   * machine, slow TIME round trips stacked on the reconnection wait). Nothing is sent before the operation, so a
   * call refused while getting ready has no effect.
   */
  async call<T>(operation: () => Promise<T>): Promise<T> {
    await this.readyWithin(this.options.readyTimeoutMs);
    try {
      return await this.withTimeout(operation());
    } catch (error) {
      if (error instanceof Error && /timed out/i.test(error.message) && !this.isCluster()) this.suspectHung();
      throw toStoreError(this.description, error);
    }
  }

  /** connected(), or 503 once `budgetMs` have passed (what it started — a clock measure — goes on by itself). */
  private readyWithin(budgetMs: number): Promise<void> {
    const client = this.client;
    if (!this.closed && client.status === 'ready' && !this.hung && this.fenceClock.ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.unavailable()), budgetMs);
      this.connected().then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /**
   * The command timeout. When the timer fires, the reply may already sit in the socket, unread because the
   * event loop was busy (timers run before I/O in a loop turn): look once more after the next I/O poll
   * (setImmediate) before giving up, so a write that ran in time is answered as done, not 503.
   */
  private withTimeout<T>(pending: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new Error(`Command timed out after ${this.options.commandTimeoutMs} ms`));
        });
      }, this.options.commandTimeoutMs);
      pending.then(
        (value) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /**
   * A command timed out on the one connection: fail every call at once (the bound) until a PING on that
   * connection is answered, which also means the commands stuck before it have been answered (refused by
   * the fence if late). After two unanswered PINGs the connection is dropped and re-opened: by then every
   * command sent before the first timeout has timed out by itself, and nothing new was sent in between.
   */
  private suspectHung(): void {
    if (this.hung) return;
    this.hung = true;
    const client = this.client as Redis;
    void (async () => {
      for (let unanswered = 0; this.hung && !this.closed && client === this.client; ) {
        try {
          await client.ping();
          this.hung = false;
        } catch {
          if (client.status !== 'ready') return; // the 'ready' event ends the suspicion
          if (++unanswered >= 2) {
            client.disconnect(true);
            return;
          }
        }
      }
    })();
  }

  private unavailable(): StoreUnavailableError {
    const why = this.lastConnectionError ? ` (${this.lastConnectionError})` : '';
    const status = this.hung ? 'not answering' : this.client.status;
    return new StoreUnavailableError(`Redis ${this.description} unavailable: ${status}${why}`);
  }

  private async connected(): Promise<void> {
    const client = this.client;
    if (this.closed) throw new StoreUnavailableError(`Redis ${this.description}: the store is closed`);
    if (client.status === 'ready') {
      if (this.hung) throw this.unavailable();
      if (!this.fenceClock.ready()) {
        try {
          await this.fenceClock.measure();
        } catch (error) {
          throw toStoreError(this.description, error);
        }
      }
      return;
    }
    if (client.status === 'end') {
      if (!this.options.createClient) throw new StoreUnavailableError(`Redis ${this.description}: the client was closed`);
      this.scheduleReplacement(); // normally already scheduled by the 'end' event
    }
    // Once a wait has timed out, fail at once until the client reconnects: callers queued behind one
    // another (e.g. join batches of one event) must not each wait readyTimeoutMs during an outage.
    if (this.unreachable) throw this.unavailable();
    if (client.status === 'wait') client.connect().catch(() => {}); // a lazyConnect client passed in
    let timer: NodeJS.Timeout | undefined;
    let resolveReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      resolveReady = resolve;
      this.readyWaiters.push(resolve);
    });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.unreachable = true;
        reject(this.unavailable());
      }, this.options.readyTimeoutMs);
    });
    try {
      await Promise.race([ready, timeout]);
    } finally {
      clearTimeout(timer);
      this.readyWaiters = this.readyWaiters.filter((waiter) => waiter !== resolveReady);
    }
    await this.connected();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.replacing) clearTimeout(this.replacing);
    if (!this.options.ownsClient) return;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
      } catch {
        // fall through: drop the connection without waiting
      }
    }
    // Also after QUIT: disconnect() is what stops a Sentinel client's failover detector (its own connections to
    // the Sentinels, which QUIT leaves open and reconnecting for ever, keeping the process alive).
    this.client.disconnect();
  }
}
