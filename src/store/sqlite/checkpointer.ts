// The purge of a reset on a thread of its own (issue 15): a second connection to the database, in a worker
// thread, deletes the old rows chunk by chunk and checkpoints the WAL after each, while the event loop answers
// requests. On the event loop, a chunk held it for its CPU time and for its disk waits: a million token sets
// sat on random pages of the tokens table (keyed by request ID then) and of its two indexes, and reading or writing them on a busy disk
// held the loop for up to ~80 ms in a chunk of ~10 ms of CPU. A checkpoint copies the WAL's pages into the
// database file and fsyncs both; SQLite runs it inside the commit that takes the WAL past 1,000 pages, which
// during a purge was nearly every chunk's. Here it is PASSIVE (it never waits for, nor blocks, the store's
// connection). The store's own writes wait for a chunk's write lock on the event loop (connection.ts:
// transaction), at most a chunk's time; this thread's connection waits in SQLite (busy_timeout) for theirs.

import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 5000');
// Chunks commit without an fsync of their own; the store's next FULL commit fsyncs the WAL they were written to.
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const statements = new Map();
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    let reply = { ok: true };
    if (message.kind === 'delete') {
      let statement = statements.get(message.sql);
      if (!statement) statements.set(message.sql, (statement = db.prepare(message.sql)));
      const started = performance.now();
      db.exec('BEGIN IMMEDIATE');
      const changes = Number(statement.run(message.eventId, message.rows).changes);
      db.exec('COMMIT');
      reply = { ok: true, changes, ms: performance.now() - started };
    }
    checkpoint.get();
    parentPort.postMessage(reply);
  } catch (error) {
    if (db.isOpen && db.isTransaction) {
      try {
        db.exec('ROLLBACK');
      } catch {}
    }
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

interface Reply {
  ok: boolean;
  message?: string;
  changes?: number;
  ms?: number;
}

export class Checkpointer {
  private readonly worker: Worker;
  private waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | null = null;
  private failed: Error | null = null;

  constructor(path: string) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { path } });
    this.worker.on('message', (reply: Reply) => {
      const waiting = this.waiting;
      this.waiting = null;
      if (reply.ok) waiting?.resolve(reply);
      else waiting?.reject(new Error(`WAL checkpoint: ${reply.message ?? 'failed'}`));
    });
    const fail = (error: Error) => {
      this.failed = error;
      this.waiting?.reject(error);
      this.waiting = null;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new Error('WAL checkpoint thread exited')));
  }

  /** One PASSIVE checkpoint of everything committed so far; one request at a time. */
  async checkpoint(): Promise<void> {
    await this.ask({ kind: 'checkpoint' });
  }

  /**
   * Runs `sql` (a DELETE of at most ?2 rows of event ?1) as one transaction on the thread's connection, then a
   * checkpoint: the rows deleted and the transaction's milliseconds.
   */
  async deleteChunk(sql: string, eventId: string, rows: number): Promise<{ changes: number; ms: number }> {
    const reply = await this.ask({ kind: 'delete', sql, eventId, rows });
    return { changes: reply.changes ?? 0, ms: reply.ms ?? 0 };
  }

  private ask(message: object): Promise<Reply> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.waiting) return Promise.reject(new Error('the purge thread is busy'));
    return new Promise<Reply>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(message);
    });
  }

  /** Closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    if (this.failed) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    await exited;
  }
}
