// The rooms API's 400 lists every problem of the settings (src/domain/room-settings-problems.ts), each naming
// its field, beside the one-line `error`; nothing is stored. The panel shows each beside its field.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { read } from '../support/api-calls.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { roomSettingsProblems } from '../../src/domain/room-settings-problems.ts';

describe('every problem of a room\'s settings at once', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node?.stop());

  it('a PUT with three wrong fields: all three listed, the first as the error, nothing created', async () => {
    const res = await read<{ error: string; problems: { field: string; rule: string }[] }>(
      node.admin('PUT', '/rooms/Bad', { validity_period: 0, queue_position_expiry_period: 'soon', validity_periodd: 5 }),
    );
    assert.equal(res.status, 400);
    assert.match(res.body.error, /^Invalid room settings: /);
    assert.deepEqual(
      res.body.problems.map((p) => p.field).sort(),
      ['queue_position_expiry_period', 'validity_period', 'validity_periodd'],
    );
    assert.deepEqual(res.body.problems.find((p) => p.field === 'validity_periodd'), { field: 'validity_periodd', rule: 'unknown setting' });
    assert.match(res.body.problems.find((p) => p.field === 'validity_period')!.rule, /^must be a whole number from 1 to/);
    assert.equal((await node.admin('GET', '/rooms/Bad')).status, 404);
  });

  it('a PATCH: the schema accepts every field, a rule across fields does not hold: that one listed', async () => {
    assert.equal((await node.admin('PUT', '/rooms/Sched', {})).status, 201);
    const res = await read<{ problems: { field: string; rule: string }[] }>(
      node.admin('PATCH', '/rooms/Sched', { event_start_time: '2026-12-01T10:00:00Z', event_end_time: '2026-12-01T09:00:00Z' }),
    );
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.problems, [{ field: 'event_end_time', rule: 'must be after event_start_time' }]);
  });

  it('values are never echoed; the list is bounded', () => {
    const secretish = { event_id: 'x', webhooks: [{ url: 'not a url', secret: 'short-secret-value' }] };
    const listed = roomSettingsProblems(secretish);
    assert.ok(listed.length >= 1);
    assert.doesNotMatch(JSON.stringify(listed), /short-secret-value|not a url/);
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`junk_${i}`, i]));
    assert.equal(roomSettingsProblems({ event_id: 'x', ...many }).length, 50);
  });
});
