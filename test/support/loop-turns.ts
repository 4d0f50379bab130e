// Counts turns of the event loop (one setImmediate callback a turn) while some work runs: how tests show that
// long work (a draw, hashing a publication, numbering places) lets other callbacks run.

export interface LoopTurns {
  /** Turns counted so far. */
  readonly count: number;
  /** Stops counting (the last callback scheduled runs once more and does not reschedule). */
  stop(): void;
}

export function countLoopTurns(): LoopTurns {
  let count = 0;
  let counting = true;
  const turn = () => {
    count++;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  return {
    get count() {
      return count;
    },
    stop: () => {
      counting = false;
    },
  };
}
