// Loaded into a server with NODE_OPTIONS="--import <this file>": the first SIGUSR2 starts V8's CPU profiler, the
// next one stops it and writes the profile to $PROFILE_OUT (JSON, as `--cpu-prof` writes it), so that a profile
// holds only the load a benchmark aimed at the server, not its start-up or the benchmark's set-up.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const session = new Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  void (async () => {
    if (!running) {
      running = true;
      await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL_US ?? 200) });
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      return;
    }
    running = false;
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.PROFILE_OUT ?? 'anteroom.cpuprofile', JSON.stringify(profile));
    process.stdout.write('profile written\n');
  })();
});
