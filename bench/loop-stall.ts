// Bench-only probe of the event loop inside a server process, loaded with `NODE_OPTIONS=--import <this file>`
// (bench/issue15.ts). Nothing of it is part of Anteroom.
//
// The first SIGUSR2 starts a watch, the next one ends it and writes one line to stderr:
//   loop-stall {"ticks":…,"wallMaxMs":…,"stallMaxMs":…,"stallAtMs":…,"watchedMs":…,"cpuMaxMs":…,"gcMaxMs":…,"gcAtMs":…,
//               "delayMaxMs":…,"delayP99Ms":…}
// A 1 ms interval timer runs during the watch; between two of its ticks the main thread ran whatever the
// loop had to run (a request, a reset chunk). wallMaxMs is the longest wall-clock gap between two ticks; on a
// loaded machine it includes the time the main thread was runnable but the scheduler gave the core to others.
// stallMaxMs is the longest gap less that wait (stallAtMs: when it began, from the watch's start) (the thread's run-queue time, /proc/thread-self/schedstat): the
// event loop held by the process itself — CPU and blocking I/O (an fsync) — what an idle machine would show.
// cpuMaxMs is the most CPU the main thread used between two ticks (process.threadCpuUsage). delay*Ms is
// monitorEventLoopDelay's view (wall clock, like wallMaxMs). gcMaxMs: the longest garbage-collection pause
// (gcAtMs: when it began).

import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** Milliseconds this thread has spent runnable but waiting for a core (Linux; 0 elsewhere). */
function runQueueMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

let watch: { stop: () => void } | null = null;

function start(): { stop: () => void } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let ticks = 0;
  let wallMax = 0;
  let stallMax = 0;
  let stallAt = 0;
  const started = performance.now();
  // Garbage collections: the longest pause and when it began (a hold of the loop that is not the server's code).
  let gcMax = 0;
  let gcAt = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration > gcMax) {
        gcMax = entry.duration;
        gcAt = entry.startTime - started;
      }
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  let cpuMax = 0;
  let lastWall = performance.now();
  let lastCpu = process.threadCpuUsage();
  let lastQueue = runQueueMs();
  const timer = setInterval(() => {
    const wall = performance.now();
    const cpu = process.threadCpuUsage();
    const queue = runQueueMs();
    ticks++;
    wallMax = Math.max(wallMax, wall - lastWall);
    const stall = wall - lastWall - (queue - lastQueue);
    if (stall > stallMax) {
      stallMax = stall;
      stallAt = lastWall - started;
    }
    lastQueue = queue;
    cpuMax = Math.max(cpuMax, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000);
    lastWall = wall;
    lastCpu = cpu;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
      gc.disconnect();
      const line = {
        ticks,
        wallMaxMs: Number(wallMax.toFixed(1)),
        stallMaxMs: Number(stallMax.toFixed(1)),
        stallAtMs: Math.round(stallAt),
        stallAtTime: new Date(performance.timeOrigin + started + stallAt).toISOString(),
        watchedMs: Math.round(performance.now() - started),
        cpuMaxMs: Number(cpuMax.toFixed(1)),
        gcMaxMs: Number(gcMax.toFixed(1)),
        gcAtMs: Math.round(gcAt),
        delayMaxMs: Number((histogram.max / 1e6).toFixed(1)),
        delayP99Ms: Number((histogram.percentile(99) / 1e6).toFixed(1)),
      };
      process.stderr.write(`loop-stall ${JSON.stringify(line)}\n`);
    },
  };
}

process.on('SIGUSR2', () => {
  if (watch) {
    watch.stop();
    watch = null;
  } else {
    watch = start();
  }
});
