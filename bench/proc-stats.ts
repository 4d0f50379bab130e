// Figures the benchmarks read from outside a process, and their one summary statistic.

import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) process `pid` has used so far, from /proc (Linux); null elsewhere. */
export function cpuSeconds(pid: number | undefined): number | null {
  try {
    // After "pid (comm) ", utime and stime are the 12th and 13th fields, in clock ticks of 1/100 s (CLK_TCK).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The median (upper one of an even count): rounds on a noisy machine are compared by it. */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
