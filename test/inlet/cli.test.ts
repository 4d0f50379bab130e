// The standalone inlets (`anteroom inlet periodic|max-size`) as child processes driving a running server
// through the private API, signed with SigV4 (the server verifies against its clock, so the node here
// runs on the real time).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventSettings, startTestNode, TEST_CREDENTIALS, TestClock, type TestNode } from '../support/node.ts';
import { startHealthServer, visitorsWithTokens, type HealthServer } from './helpers.ts';
import { killWithTest } from '../support/children.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));

/** The environment without any ANTEROOM_* variable of the developer's shell. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ANTEROOM_')));

interface Run {
  code: number | string;
  stdout: string;
  stderr: string;
}

function anteroom(args: string[], options: { env?: Record<string, string>; onStdout?: (text: string) => void } = {}) {
  const child = killWithTest(spawn(process.execPath, [BIN, 'inlet', ...args], {
    env: { ...cleanEnv, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    options.onStdout?.(stdout);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = once(child, 'exit').then(([code, signal]): Run => ({ code: (code ?? signal) as number | string, stdout, stderr }));
  return { child, done };
}

const run = (args: string[], env?: Record<string, string>) => anteroom(args, { env }).done;

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('anteroom inlet (standalone, SigV4)', () => {
  let node: TestNode;
  let site: HealthServer;
  let sigv4: string[];

  before(async () => {
    node = await startTestNode(
      { events: [eventSettings('Sample'), eventSettings('Other')] },
      { clock: new TestClock(Date.now()) as TestClock & (() => number) },
    );
    site = await startHealthServer();
    sigv4 = [
      '--private-url', node.privateUrl,
      '--access-key-id', TEST_CREDENTIALS.accessKeyId,
      '--secret-access-key', TEST_CREDENTIALS.secretAccessKey,
      '--region', 'eu-west-1',
    ];
  });
  after(async () => {
    await node.stop();
    await site.close();
  });
  beforeEach(async () => {
    assert.equal((await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' })).status, 200);
    site.answer = { status: 200, body: '{"load":0.1}', delayMs: 0 };
  });

  const serving = async () => (await node.room.reports.counters('Sample')).serving;

  it('max-size closes the reported sessions and moves the serving counter', async () => {
    const ids = await visitorsWithTokens(node, 4);
    const result = await run([
      'max-size', ...sigv4, '--event-id', 'Sample', '--max-size', '5', '--exited', '1',
      '--completed', `${ids[0]},${ids[1]}`, '--abandoned', ids[2]!, '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const [line] = lines(result.stdout);
    assert.deepEqual(
      { ...line, time: undefined },
      // 4 active − 3 closed = 1 of 5 → capacity 4; exited 1 + closed 3 = 4.
      { time: undefined, event_id: 'Sample', strategy: 'max_size', max_size: 5, serving_num: 8, moved_by: 4, closed: 3, capacity: 4 },
    );
    assert.equal(await serving(), 8);
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.completed, 2);
    assert.equal(counters.abandoned, 1);
  });

  it('max-size with no capacity leaves the counter alone and says so', async () => {
    await visitorsWithTokens(node, 2);
    const result = await run(['max-size', ...sigv4, '--max-size', '2', '--exited', '5']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Sample max-size: closed 0 session\(s\), 2 active of 2 \(capacity 0\), serving counter unchanged at 2/);
    assert.equal(await serving(), 2);
  });

  it('max-size refuses a negative --exited or a malformed ID before calling the server', async () => {
    const ids = await visitorsWithTokens(node, 1);
    const negative = await run(['max-size', ...sigv4, '--max-size', '5', '--exited', '-1']);
    assert.equal(negative.code, 2);
    assert.match(negative.stderr, /--exited/);
    const malformed = await run(['max-size', ...sigv4, '--max-size', '5', '--completed', `${ids[0]},nope`]);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /--completed: "nope" is not a request ID/);
    assert.equal((await node.room.reports.counters('Sample')).completed, 0);
    assert.equal(await serving(), 1);
  });

  it('periodic --once adds increment_by through SigV4', async () => {
    const result = await run(['periodic', ...sigv4, '--increment-by', '25', '--once']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Sample periodic: serving counter \+25 -> 25/);
    assert.equal(await serving(), 25);
  });

  it('periodic --once with the admin token works the same', async () => {
    const result = await run(['periodic', '--private-url', node.privateUrl, '--increment-by', '3', '--once'], {
      ANTEROOM_ADMIN_TOKEN: TEST_CREDENTIALS.adminToken,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await serving(), 3);
  });

  it('periodic skips the tick while the pause check says ALARM (non-2xx or metric over threshold)', async () => {
    site.answer = { status: 503, body: '{}', delayMs: 0 };
    const down = await run(['periodic', ...sigv4, '--increment-by', '10', '--once', '--pause-url', site.url, '--json']);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(lines(down.stdout)[0]?.outcome, 'paused');
    site.answer = { status: 200, body: '{"load":0.9}', delayMs: 0 };
    const busy = await run([
      'periodic', ...sigv4, '--increment-by', '10', '--once', '--pause-url', site.url, '--pause-json-path', '$.load', '--pause-threshold', '0.8',
    ]);
    assert.match(busy.stdout, /paused \(\$\.load = 0\.9 is over the threshold 0\.8\)/);
    assert.equal(await serving(), 0);
    site.answer = { status: 200, body: '{"load":0.5}', delayMs: 0 };
    const fine = await run([
      'periodic', ...sigv4, '--increment-by', '10', '--once', '--pause-url', site.url, '--pause-json-path', '$.load', '--pause-threshold', '0.8',
    ]);
    assert.equal(fine.code, 0, fine.stderr);
    assert.equal(await serving(), 10);
  });

  it('periodic outside its window does not move: before the start, after the end', async () => {
    const now = Math.floor(Date.now() / 1000);
    const early = await run(['periodic', ...sigv4, '--increment-by', '10', '--once', '--start-time', String(now + 3600)]);
    assert.match(early.stdout, /waiting for the start time/);
    const late = await run(['periodic', ...sigv4, '--increment-by', '10', '--start-time', String(now - 7200), '--end-time', new Date((now - 3600) * 1000).toISOString()]);
    assert.equal(late.code, 0, 'a run past its end time exits by itself');
    assert.match(late.stdout, /end time .* passed/);
    assert.equal(await serving(), 0);
  });

  it('periodic ticks every interval until its end time, then exits', async () => {
    // What is asserted holds however slowly the process starts on a busy machine: the moves come one per tick,
    // numbered in order, the run ends with a tick at or after the end time, and ticks keep to the interval's
    // grid (no more moves than whole intervals between the start and the end).
    const started = Date.now();
    const end = Math.floor(started / 1000) + 6;
    const result = await run(['periodic', ...sigv4, '--increment-by', '1', '--interval', '1', '--end-time', String(end), '--json']);
    assert.equal(result.code, 0, result.stderr);
    const ticks = lines(result.stdout);
    assert.equal(ticks.at(-1)?.outcome, 'ended', 'the run ends with the tick after the end time');
    assert.ok(Date.parse(String(ticks.at(-1)?.time)) >= end * 1000, 'ended only once the end time has come');
    const moves = ticks.slice(0, -1);
    assert.ok(moves.length >= 1, 'the run started before its end time, so it moved');
    assert.ok(moves.length <= Math.ceil((end * 1000 - started) / 1000), `one move per interval at most (got ${moves.length})`);
    moves.forEach((tick, i) => {
      assert.deepEqual(tick, { time: tick.time, event_id: 'Sample', strategy: 'periodic', outcome: 'moved', moved_by: 1, serving_num: i + 1 });
    });
    assert.equal(await serving(), moves.length);
  });

  it('periodic stops on SIGTERM with exit code 0', async () => {
    let resolveFirst: () => void = () => {};
    const firstLine = new Promise<void>((resolve) => (resolveFirst = resolve));
    const { child, done } = anteroom(['periodic', ...sigv4, '--increment-by', '1', '--interval', '60'], {
      onStdout: (text) => text.includes('\n') && resolveFirst(),
    });
    await firstLine;
    child.kill('SIGTERM');
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await serving(), 1);
  });

  it('wrong credentials: the server answers 403 and the run stops with exit code 1', async () => {
    const result = await run([
      'periodic', '--private-url', node.privateUrl, '--access-key-id', TEST_CREDENTIALS.accessKeyId,
      '--secret-access-key', 'not-the-secret-0123456789', '--increment-by', '5',
    ]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /403: Forbidden/);
    assert.equal(await serving(), 0);
  });

  it('an unknown event is reported, not retried forever', async () => {
    const result = await run(['periodic', ...sigv4, '--event-id', 'Nope', '--increment-by', '5']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /400: Invalid event ID/);
  });

  it('configuration errors name the option and exit 2', async () => {
    const noCreds = await run(['periodic', '--private-url', node.privateUrl, '--increment-by', '5']);
    assert.equal(noCreds.code, 2);
    assert.match(noCreds.stderr, /credentials for the private API are required/);
    const both = await run([...['periodic', ...sigv4], '--admin-token', TEST_CREDENTIALS.adminToken, '--increment-by', '5']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /not both/);
    const window = await run(['periodic', ...sigv4, '--increment-by', '5', '--start-time', '200', '--end-time', '100']);
    assert.match(window.stderr, /--end-time must be after --start-time/);
    const pause = await run(['periodic', ...sigv4, '--increment-by', '5', '--pause-json-path', 'load']);
    assert.match(pause.stderr, /need --pause-url/);
  });
});
