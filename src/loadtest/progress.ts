// The live progress line: rewritten in place (\r) on a terminal, a plain line every few seconds otherwise
// (CI logs, pipes). Written to stderr so stdout stays the summary and the JSON line.

import type { SecondSample } from './stats.ts';

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressCounts {
  planned: number;
  finished: number;
  failed: number;
}

export function progressLine(sample: SecondSample, counts: ProgressCounts): string {
  return [
    `${sample.t.toFixed(0).padStart(4)}s`,
    `joined ${sample.joined}/${counts.planned}`,
    `waiting ${sample.waiting}`,
    `served ${sample.served}`,
    `done ${counts.finished - counts.failed}`,
    counts.failed > 0 ? `failed ${counts.failed}` : '',
    `counter ${sample.servingCounter}`,
    `${sample.requestsPerSec.toFixed(0)} req/s`,
    `p99 ${sample.p99.toFixed(1)} ms`,
    `errors ${sample.errorsPerSec.toFixed(0)}/s`,
    `client busy ${(sample.clientBusy * 100).toFixed(0)}%`,
    sample.serverCpu === null ? '' : `server cpu ${(sample.serverCpu * 100).toFixed(0)}%`,
  ]
    .filter(Boolean)
    .join('  ');
}

export class Progress {
  private readonly out: ProgressSink;
  private readonly everyMs: number;
  private lastPlain = -Infinity;
  private drawn = false;

  /** `plainEveryMs`: how often a line is printed when the sink is not a terminal. */
  constructor(out: ProgressSink, plainEveryMs = 5000) {
    this.out = out;
    this.everyMs = plainEveryMs;
  }

  update(sample: SecondSample, counts: ProgressCounts): void {
    const line = progressLine(sample, counts);
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[K${line}`);
      this.drawn = true;
    } else if (sample.t * 1000 - this.lastPlain >= this.everyMs) {
      this.out.write(`${line}\n`);
      this.lastPlain = sample.t * 1000;
    }
  }

  /** Ends the live line so what follows starts on a fresh one. */
  done(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }

  note(text: string): void {
    this.done();
    this.out.write(`${text}\n`);
  }
}
