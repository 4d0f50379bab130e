// The pure rules of the inlet strategies (spec/integrations.md §3), branch by branch, and the "inlet"
// member of the events config file.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';
import { parseRoomSettings } from '../../src/domain/room-settings.ts';
import { describeProblem } from '../../src/domain/setting-problems.ts';
import { decideMaxSize, maxSizeReportProblem, MAX_REPORT_IDS } from '../../src/inlet/max-size.ts';
import { readJsonPath } from '../../src/inlet/pause-check.ts';
import { decidePeriodicTick, periodicWindow } from '../../src/inlet/periodic.ts';

/** The "inlet" member alone, through the room-settings schema: its settings, or the problem as text. */
function inletSettings(inlet: unknown) {
  const room = parseRoomSettings({ event_id: 'A', inlet });
  return room.ok ? room.settings.inlet : describeProblem(room.problem);
}

const base = { startTime: 1000, endTime: 2000, incrementBy: 10, paused: false };

describe('periodic inlet: decidePeriodicTick', () => {
  it('before the start time the counter does not move', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 999 }), { kind: 'before-start' });
  });
  it('at exactly the start time it does not move yet (start_time < now)', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1000 }), { kind: 'before-start' });
  });
  it('inside the window it adds increment_by', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1001 }), { kind: 'increment', by: 10 });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1999 }), { kind: 'increment', by: 10 });
  });
  it('at exactly the end time and after it the counter does not move (now < end_time)', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 2000 }), { kind: 'ended' });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 5000 }), { kind: 'ended' });
  });
  it('end_time 0 means no end', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, endTime: 0, now: 4_000_000_000 }), { kind: 'increment', by: 10 });
  });
  it('start_time 0 admits from the first tick', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, startTime: 0, endTime: 0, now: 1 }), { kind: 'increment', by: 10 });
  });
  it('while the pause check says ALARM the tick is skipped', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1500, paused: true }), { kind: 'paused' });
  });
  it('outside the window the window wins over a pause', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 10, paused: true }), { kind: 'before-start' });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 3000, paused: true }), { kind: 'ended' });
  });
  it('periodicWindow names where now lies', () => {
    assert.equal(periodicWindow(5, 10, 20), 'before-start');
    assert.equal(periodicWindow(15, 10, 20), 'open');
    assert.equal(periodicWindow(25, 10, 20), 'ended');
    assert.equal(periodicWindow(25, 10, 0), 'open');
  });
});

describe('MaxSize inlet: decideMaxSize', () => {
  it('moves by exited + closed when capacity allows', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 40, exited: 3, closedNow: 2 }), { capacity: 60, moveBy: 5 });
  });
  it('moves by no more than the capacity', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 97, exited: 10, closedNow: 5 }), { capacity: 3, moveBy: 3 });
  });
  it('capacity exactly equal to what was reported moves by all of it', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 10, activeTokens: 5, exited: 2, closedNow: 3 }), { capacity: 5, moveBy: 5 });
  });
  it('capacity 0: no movement', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 50, activeTokens: 50, exited: 7, closedNow: 1 }), { capacity: 0, moveBy: 0 });
  });
  it('negative capacity: no movement, never backwards (VWR moved the counter back)', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 10, activeTokens: 25, exited: 4, closedNow: 0 }), { capacity: -15, moveBy: 0 });
  });
  it('nothing reported: no movement even with room', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 0, exited: 0, closedNow: 0 }), { capacity: 100, moveBy: 0 });
  });
  it('max_size 0 lets nobody in', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 0, activeTokens: 0, exited: 5, closedNow: 5 }), { capacity: 0, moveBy: 0 });
  });
  it('each report stands alone: the same input gives the same answer (no module-level running total)', () => {
    const input = { maxSize: 10, activeTokens: 2, exited: 3, closedNow: 0 };
    assert.deepEqual(decideMaxSize(input), decideMaxSize(input));
  });
  it('refuses a negative or fractional exited, and other non-counts', () => {
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: 0, exited: -1, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: 0, exited: 1.5, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: -1, activeTokens: 0, exited: 0, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: Number.NaN, exited: 0, closedNow: 0 }), RangeError);
  });
});

describe('MaxSize inlet: report validation', () => {
  const id = '6f1c2b4e-8a3d-4c5e-9f10-1a2b3c4d5e6f';
  it('accepts a well-formed report', () => {
    assert.equal(maxSizeReportProblem({ exited: 0, completed: [id], abandoned: [id.toUpperCase()] }), null);
  });
  it('refuses a negative exited', () => {
    assert.match(maxSizeReportProblem({ exited: -1, completed: [], abandoned: [] }) ?? '', /exited/);
  });
  it('refuses an ID that is not a UUID, naming its list', () => {
    assert.match(maxSizeReportProblem({ exited: 0, completed: [id], abandoned: [`${id}x`] }) ?? '', /^abandoned/);
  });
  it('refuses more IDs than one report may hold', () => {
    const many = Array.from({ length: MAX_REPORT_IDS + 1 }, () => id);
    assert.match(maxSizeReportProblem({ exited: 0, completed: many, abandoned: [] }) ?? '', /at most/);
  });
});

describe('pause check: JSON paths', () => {
  const doc = { cpu: { load: 0.7 }, 'system.cpu.usage': 3, measurements: [{ value: 42 }], a: { 'b/c': 1 } };
  it('reads dotted paths, with or without "$."', () => {
    assert.equal(readJsonPath(doc, 'cpu.load'), 0.7);
    assert.equal(readJsonPath(doc, '$.cpu.load'), 0.7);
    assert.equal(readJsonPath(doc, 'measurements.0.value'), 42);
    assert.deepEqual(readJsonPath(doc, '$'), doc);
  });
  it('reads JSON Pointers, for keys holding dots or slashes', () => {
    assert.equal(readJsonPath(doc, '/system.cpu.usage'), 3);
    assert.equal(readJsonPath(doc, '/measurements/0/value'), 42);
    assert.equal(readJsonPath(doc, '/a/b~1c'), 1);
  });
  it('missing members and inherited properties are undefined', () => {
    assert.equal(readJsonPath(doc, 'cpu.idle'), undefined);
    assert.equal(readJsonPath(doc, 'measurements.x'), undefined);
    assert.equal(readJsonPath(doc, 'cpu.constructor'), undefined);
  });
});

describe('events file: the "inlet" member', () => {
  it('fills the periodic defaults: interval 60 s, start 0, no end', () => {
    assert.deepEqual(inletSettings({ strategy: 'periodic', increment_by: 10 }), {
      strategy: 'periodic',
      interval: 60,
      increment_by: 10,
      start_time: 0,
      end_time: 0,
    });
  });
  it('reads a pause check with a threshold', () => {
    const settings = inletSettings({
      strategy: 'periodic',
      increment_by: 5,
      pause_check: { url: 'http://127.0.0.1:9/health', json_path: '$.load', threshold: 0.8 },
    });
    assert.deepEqual(typeof settings === 'object' && settings.strategy === 'periodic' && settings.pause_check, {
      url: 'http://127.0.0.1:9/health',
      json_path: '$.load',
      threshold: 0.8,
      timeout: 5,
    });
  });
  it('reads max_size', () => {
    assert.deepEqual(inletSettings({ strategy: 'max_size', max_size: 100 }), { strategy: 'max_size', max_size: 100 });
  });
  it('names the field at fault', () => {
    assert.match(String(inletSettings({ strategy: 'sometimes' })), /inlet\.strategy/);
    assert.match(String(inletSettings({ strategy: 'periodic' })), /increment_by/);
    assert.match(String(inletSettings({ strategy: 'periodic', increment_by: 0 })), /inlet\.increment_by/);
    assert.match(String(inletSettings({ strategy: 'max_size', max_size: -1 })), /inlet\.max_size/);
    assert.match(String(inletSettings({ strategy: 'max_size', max_size: 1, extra: 1 })), /inlet/);
    assert.match(String(inletSettings({ strategy: 'periodic', increment_by: 1, start_time: 100, end_time: 50 })), /end_time/);
    assert.match(
      String(inletSettings({ strategy: 'periodic', increment_by: 1, pause_check: { url: 'http://x', threshold: 1 } })),
      /json_path and threshold go together/,
    );
    assert.match(String(inletSettings({ strategy: 'periodic', increment_by: 1, pause_check: { url: 'ftp://x' } })), /pause_check\.url/);
    assert.match(
      String(inletSettings({ strategy: 'periodic', increment_by: 1, interval: 5, pause_check: { url: 'http://x' } })),
      /timeout: must be shorter than the interval/,
    );
  });
  it('is read from the events file, and a bad one fails the start with the event named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-inlet-config-'));
    try {
      const file = join(dir, 'events.json');
      writeFileSync(
        file,
        JSON.stringify({
          events: [
            { event_id: 'A', inlet: { strategy: 'periodic', interval: 30, increment_by: 10, end_time: 0 } },
            { event_id: 'B', inlet: { strategy: 'max_size', max_size: 100 } },
            { event_id: 'C' },
          ],
        }),
      );
      const events = readEventsFile(file, defaultEventDefaults());
      assert.deepEqual(events[0]?.inlet, { strategy: 'periodic', interval: 30, increment_by: 10, start_time: 0, end_time: 0 });
      assert.deepEqual(events[1]?.inlet, { strategy: 'max_size', max_size: 100 });
      assert.equal(events[2]?.inlet, undefined);

      writeFileSync(file, JSON.stringify({ events: [{ event_id: 'A', inlet: { strategy: 'max_size' } }] }));
      assert.throws(() => readEventsFile(file, defaultEventDefaults()), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /event "A": inlet.*max_size/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
