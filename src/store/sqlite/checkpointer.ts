// WAL checkpoints on a thread of their own, for the purge of a reset (issue 15). A checkpoint copies the WAL's
// pages into the database file and fsyncs both: SQLite runs it inside the commit that takes the WAL past 1,000
// pages, on the event loop. A purge dirties hundreds of pages per chunk (a token set's rows sit on random pages
// of the tokens table and of its two indexes), so nearly every chunk's commit paid a checkpoint: tens of
// milliseconds of disk waits, on a busy disk more than the chunk itself. Here a second connection, in a worker
// thread, checkpoints (PASSIVE: it never waits for, nor blocks, the store's connection) while the event loop
// answers requests; the store waits for it, asynchronously, before its next chunk, so the WAL stays small.

import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 5000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    checkpoint.get();
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

export class Checkpointer {
  private readonly worker: Worker;
  private waiting: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private failed: Error | null = null;

  constructor(path: string) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { path } });
    this.worker.on('message', (reply: { ok: boolean; message?: string }) => {
      const waiting = this.waiting;
      this.waiting = null;
      if (reply.ok) waiting?.resolve();
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

  /** One PASSIVE checkpoint of everything committed so far; one at a time. */
  checkpoint(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.waiting) return Promise.reject(new Error('a WAL checkpoint is already running'));
    return new Promise<void>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage('checkpoint');
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
