// The configuration of the inlet strategies: the pause check's JSON paths and the "inlet" member of the events
// config file. Their admission rules are tested with the domain (test/domain/admission.test.ts).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';
import { ConfigError } from '../../src/domain/errors.ts';
import { parseRoomSettings } from '../../src/domain/room-settings.ts';
import { describeProblem } from '../../src/domain/setting-problems.ts';
import { readJsonPath } from '../../src/inlet/pause-check.ts';

/** The "inlet" member alone, through the room-settings schema: its settings, or the problem as text. */
function inletSettings(inlet: unknown) {
  const room = parseRoomSettings({ event_id: 'A', inlet });
  return room.ok ? room.settings.inlet : describeProblem(room.problem);
}

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
