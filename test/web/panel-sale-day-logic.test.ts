// The panel's sale-day helpers without a browser: the schedule's local-time pickers and their UTC value (under
// a fixed time zone), the phase-change warning, and the audit log's before → after and room filter.

process.env.TZ = 'America/New_York';

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditQuery, changes } from '../../web/control-panel/audit-view.ts';
import { isoToLocalInput, localInputToIso, utcNote } from '../../web/control-panel/local-time.ts';
import { phaseChangeText } from '../../web/control-panel/phase-change.ts';

describe('the schedule in the operator\'s time zone', () => {
  it('shows a UTC setting in local time and saves a local pick as UTC, across a DST change', () => {
    assert.equal(isoToLocalInput('2026-12-01T15:00:00Z'), '2026-12-01T10:00:00'); // EST, UTC−5
    assert.equal(isoToLocalInput('2026-07-01T15:00:00Z'), '2026-07-01T11:00:00'); // EDT, UTC−4
    assert.equal(localInputToIso('2026-12-01T10:00:00'), '2026-12-01T15:00:00Z');
    assert.equal(localInputToIso('2026-07-01T11:00'), '2026-07-01T15:00:00Z');
    assert.equal(utcNote('2026-12-01T10:00:30'), 'In UTC: 2026-12-01T15:00:30Z');
    assert.equal(localInputToIso(''), '');
    assert.equal(isoToLocalInput(undefined), '');
    assert.equal(utcNote(''), 'Not scheduled.');
  });
});

describe('the phase-change warning', () => {
  const now = Date.parse('2026-11-25T09:45:00Z');
  const schedule = { prequeue_start_time: '2026-11-25T09:30:00Z', event_start_time: '2026-11-25T10:00:00Z' };
  it('names the phase now and the one saving moves to, with what it means', () => {
    assert.equal(phaseChangeText('prequeue', schedule, now, true), '');
    assert.equal(
      phaseChangeText('prequeue', { ...schedule, event_start_time: '2026-11-25T09:40:00Z', shuffle_at_event_start: false }, now, false),
      'Saving takes the room from Pre-queue to Open now: joins are accepted and people are let in.',
    );
    assert.match(phaseChangeText('open', { state: 'closed' }, now, false), /^Saving takes the room from Open to Closed now: new joins are refused/);
    assert.match(phaseChangeText('open', { event_end_time: '2026-11-25T09:00:00Z', event_start_time: '2026-11-25T08:00:00Z' }, now, false), /to Ended now/);
    assert.match(phaseChangeText('open', { prequeue_start_time: '2026-11-25T11:00:00Z', event_start_time: '2026-11-25T12:00:00Z' }, now, false), /to Not open yet now: joins are refused until the pre-queue opens/);
  });
  it('says nothing for a new room', () => {
    assert.equal(phaseChangeText(undefined, { state: 'closed' }, now, false), '');
  });
});

describe('the audit log', () => {
  it('lists each setting whose value changed, before → after; created and deleted rooms', () => {
    assert.deepEqual(changes({ state: 'open', new_users_per_minute: 60, phase: 'open' }, { state: 'paused', new_users_per_minute: 60, phase: 'paused', issuer: 'x' }), [
      'issuer: (none) → "x"',
      'phase: "open" → "paused"',
      'state: "open" → "paused"',
    ]);
    assert.deepEqual(changes(null, { state: 'open' }), ['created']);
    assert.deepEqual(changes({ state: 'open' }, null), ['deleted']);
    assert.deepEqual(changes(undefined, undefined), []);
  });
  it('asks the server for one room (empty: every room), older pages with before; no query for what is not a room ID', () => {
    assert.equal(auditQuery('A', undefined), '?limit=100&event_id=A');
    assert.equal(auditQuery('', undefined), '?limit=100');
    assert.equal(auditQuery('Sale-1', 42), '?limit=100&event_id=Sale-1&before=42');
    assert.equal(auditQuery('a b', undefined), undefined);
    assert.equal(auditQuery('x'.repeat(129), undefined), undefined);
    assert.equal(auditQuery('A&event_id=B', undefined), undefined);
  });
});
