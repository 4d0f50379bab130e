import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost, parseDuration, parseLoadTestOptions, parseRate } from '../../src/loadtest/options.ts';

const base = { target: 'http://127.0.0.1:8080', adminToken: 'admin-token-0123456789' };

describe('load test options', () => {
  it('durations: ms, s, m, h, combinations, bare seconds', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1s'), 1000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('2m'), 120_000);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('3'), 3000);
    assert.throws(() => parseDuration('soon'), /not a duration/);
    assert.throws(() => parseDuration('1s junk'), /not a duration/);
  });

  it('rates: per second by default, /s, /min, /h', () => {
    assert.equal(parseRate('300'), 300);
    assert.equal(parseRate('300/s'), 300);
    assert.equal(parseRate('6000/min'), 100);
    assert.equal(parseRate('60/m'), 1);
    assert.equal(parseRate('7200/h'), 2);
    assert.throws(() => parseRate('fast'), /not a rate/);
  });

  it('loopback means 127.0.0.0/8, ::1 and localhost', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '[::1]']) assert.equal(isLoopbackHost(host), true, host);
    for (const host of ['10.0.0.1', '128.0.0.1', '127.0.0.256', 'example.com', '127.0.0.1.nip.io', 'localhost.example.com', '[::2]', '0.0.0.0']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });

  it('refuses a remote target unless --allow-remote is given', () => {
    assert.throws(() => parseLoadTestOptions({ ...base, target: 'https://waitingroom.example.com' }), /not a loopback address.*--allow-remote/);
    assert.throws(
      () => parseLoadTestOptions({ ...base, privateTarget: 'https://abc.execute-api.eu-west-1.amazonaws.com/api' }),
      /--private-target .* not a loopback address/,
    );
    const o = parseLoadTestOptions({ ...base, target: 'https://waitingroom.example.com/', allowRemote: true });
    assert.equal(o.target, 'https://waitingroom.example.com');
    assert.equal(o.privateTarget, 'https://waitingroom.example.com/private');
  });

  it('defaults: event Sample, private API under /private, 1 s polls, 3 re-claims, a bounded duration', () => {
    const o = parseLoadTestOptions({ ...base, visitors: '1000', arrivalRate: '100/s', admitRate: '50/s' });
    assert.equal(o.eventId, 'Sample');
    assert.equal(o.privateTarget, 'http://127.0.0.1:8080/private');
    assert.equal(o.pollIntervalMs, 1000);
    assert.equal(o.reclaims, 3);
    assert.equal(o.connections, 128);
    assert.equal(o.pipelining, 8, 'polls pipelined 8 deep');
    assert.deepEqual(o.auth, { adminToken: 'admin-token-0123456789' });
    // Planned journey: 1000 visitors admitted at 50/s = 20 s; twice that plus 30 s plus 4 polls.
    assert.equal(o.durationMs, 74_000);
    assert.equal(o.durationIsDefault, true);
  });

  it('needs private credentials: a bearer token or a SigV4 key pair, not both', () => {
    assert.throws(() => parseLoadTestOptions({ target: base.target }), /--admin-token/);
    assert.throws(() => parseLoadTestOptions({ target: base.target, accessKeyId: 'AKIDEXAMPLE' }), /go together/);
    assert.throws(() => parseLoadTestOptions({ ...base, accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 's' }), /not both/);
    const o = parseLoadTestOptions({ target: base.target, accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-0123456789', region: 'eu-west-1' });
    assert.deepEqual(o.auth, { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-0123456789', region: 'eu-west-1', sessionToken: undefined });
  });

  it('rejects nonsense values naming the flag', () => {
    assert.throws(() => parseLoadTestOptions({ ...base, visitors: '0' }), /--visitors/);
    assert.throws(() => parseLoadTestOptions({ ...base, visitors: '1.5' }), /--visitors/);
    assert.throws(() => parseLoadTestOptions({ ...base, arrivalRate: '0/s' }), /--arrival-rate/);
    assert.throws(() => parseLoadTestOptions({ ...base, reclaims: '4' }), /--reclaims/);
    assert.throws(() => parseLoadTestOptions({ ...base, pollInterval: '1ms' }), /--poll-interval/);
    assert.throws(() => parseLoadTestOptions({ ...base, pipelining: '65' }), /--pipelining must be a whole number from 0 to 64/);
    assert.throws(() => parseLoadTestOptions({ ...base, pipelining: '-1' }), /--pipelining/);
    assert.equal(parseLoadTestOptions({ ...base, pipelining: '0' }).pipelining, 0);
    assert.throws(() => parseLoadTestOptions({ ...base, eventId: 'a b' }), /--event-id/);
    assert.throws(() => parseLoadTestOptions({ ...base, target: 'ftp://127.0.0.1' }), /--target/);
    assert.throws(() => parseLoadTestOptions({ ...base, target: 'http://127.0.0.1:8080/?x=1' }), /--target/);
  });

  it('visitors who close the tab: shares as 0.3 or 30 %, a seed, the room\'s presence for the run, a presence beat', () => {
    const none = parseLoadTestOptions(base);
    assert.equal(none.abandon, 0);
    assert.equal(none.comeBack, 0);
    assert.equal(none.seed, 1);
    assert.equal(none.presenceTimeout, null, 'the room is left as it is');
    assert.equal(none.arrivalWindow, null);
    assert.equal(none.presenceBeatMs, 0, 'no /queue_num beat unless presence is measured');
    const o = parseLoadTestOptions({ ...base, abandon: '30%', comeBack: '0.5', comeBackAfter: '20s', seed: '7', presenceTimeout: '30', arrivalWindow: '15' });
    assert.equal(o.abandon, 0.3);
    assert.equal(o.comeBack, 0.5);
    assert.equal(o.comeBackAfterMs, 20_000);
    assert.equal(o.seed, 7);
    assert.equal(o.presenceTimeout, 30);
    assert.equal(o.arrivalWindow, 15);
    assert.equal(o.presenceBeatMs, 10_000, 'like the waiting page: /queue_num every 10 s');
    assert.equal(parseLoadTestOptions({ ...base, abandon: '0.3', presenceBeat: 'never' }).presenceBeatMs, 0);
    assert.equal(parseLoadTestOptions({ ...base, presenceTimeout: '0', presenceBeat: '5s' }).presenceBeatMs, 5000);
    // Those who come back may be away 1.5 × --come-back-after: the default duration leaves them that time.
    const plain = parseLoadTestOptions({ ...base, visitors: '1000', arrivalRate: '100/s', admitRate: '50/s', abandon: '0.3' });
    const back = parseLoadTestOptions({ ...base, visitors: '1000', arrivalRate: '100/s', admitRate: '50/s', abandon: '0.3', comeBack: '1', comeBackAfter: '20s' });
    assert.equal(back.durationMs - plain.durationMs, 30_000);
  });

  it('rejects shares outside 0–1, a come-back without abandoning, and bad presence values', () => {
    for (const bad of ['1.5', '-0.1', '150%', 'some', '']) assert.throws(() => parseLoadTestOptions({ ...base, abandon: bad }), /--abandon must be a share from 0 to 1/, bad);
    assert.throws(() => parseLoadTestOptions({ ...base, abandon: '0.3', comeBack: '2' }), /--come-back/);
    assert.throws(() => parseLoadTestOptions({ ...base, comeBack: '0.5' }), /--come-back needs --abandon/);
    assert.throws(() => parseLoadTestOptions({ ...base, abandon: '0.3', comeBackAfter: '500ms' }), /--come-back-after/);
    assert.throws(() => parseLoadTestOptions({ ...base, seed: '-1' }), /--seed/);
    assert.throws(() => parseLoadTestOptions({ ...base, presenceTimeout: '3601' }), /--presence-timeout/);
    assert.throws(() => parseLoadTestOptions({ ...base, arrivalWindow: 'soon' }), /--arrival-window/);
    assert.throws(() => parseLoadTestOptions({ ...base, presenceBeat: '10ms' }), /--presence-beat/);
  });
});
