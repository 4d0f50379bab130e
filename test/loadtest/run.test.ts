import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import { parseLoadTestOptions } from '../../src/loadtest/options.ts';
import { renderReport } from '../../src/loadtest/report.ts';
import { LoadTestSetupError, runLoadTest, type LoadTestResult } from '../../src/loadtest/run.ts';
import type { VerdictName } from '../../src/loadtest/verdicts.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';
import { FAKE_ADMIN_TOKEN, startFakeWaitingRoom, type Bug } from './fake-waiting-room.ts';

/** A short journey: a few hundred visitors, done in a couple of seconds. */
function smallRun(target: string, privateTarget: string, extra: Record<string, unknown> = {}) {
  return parseLoadTestOptions({
    target,
    privateTarget,
    visitors: '300',
    arrivalRate: '300/s',
    admitRate: '300/s',
    pollInterval: '100ms',
    duration: '30s',
    reset: true,
    adminToken: TEST_CREDENTIALS.adminToken,
    ...extra,
  });
}

function failing(result: LoadTestResult): VerdictName[] {
  return result.verdicts.filter((v) => !v.ok).map((v) => v.name);
}

describe('load test against a correct waiting room (in-process Anteroom, system clock)', () => {
  let node: AnteroomNode;
  let dataDir: string;
  let result: LoadTestResult;
  before(async () => {
    const config = testConfig();
    dataDir = config.dataDir;
    node = await startNode(config, { credentials: TEST_CREDENTIALS, jobs: false });
    result = await runLoadTest(smallRun(node.publicUrl, node.privateUrl));
  });
  after(async () => {
    await node.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every visitor finishes the journey: joined, placed, served, re-claimed', () => {
    const s = result.summary;
    assert.equal(s.ended_by, 'journey');
    assert.deepEqual(s.visitors, { planned: 300, joined: 300, placed: 300, served: 300, done: 300, failed: 0, unfinished: 0 });
    assert.equal(s.errors.total, 0);
  });

  it('every verdict holds', () => {
    assert.deepEqual(failing(result), []);
    assert.equal(result.summary.ok, true);
    assert.match(result.summary.verdicts.positions_unique_gap_free.detail, /300 positions 1\.\.300/);
    assert.match(result.summary.verdicts.tokens_verify.detail, /900 tokens of 300 visitors/);
    assert.match(result.summary.verdicts.reclaims_identical.detail, /900 re-claims/);
  });

  it('measures each endpoint of the journey and the time in queue', () => {
    const l = result.summary.latency_ms;
    assert.equal(l.assign_queue_num?.count, 300);
    assert.equal(l.queue_num?.count, 600, 'placement and the final confirmation');
    assert.equal(l.generate_token?.count, 330, 'every 10th visitor claims twice at once');
    assert.equal(l.generate_token_reclaim?.count, 900);
    assert.ok((l.serving_num?.count ?? 0) >= 300);
    assert.ok((l.increment_serving_counter?.count ?? 0) >= 1);
    assert.equal(result.summary.time_in_queue_s.count, 300);
    assert.ok(result.summary.joins_per_s > 0 && result.summary.admissions_per_s > 0);
  });

  it('the JSON summary is one line of JSON', () => {
    const line = JSON.stringify(result.summary);
    assert.ok(!line.includes('\n'));
    assert.deepEqual(JSON.parse(line), result.summary);
  });

  it('the HTML report is self-contained: no external URL, charts inline', () => {
    const html = renderReport(result, { command: 'anteroom loadtest --admin-token ***' });
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i);
    assert.doesNotMatch(html, /<link\b/i);
    assert.doesNotMatch(html, /@import|url\(/i);
    assert.equal((html.match(/<svg /g) ?? []).length, 6);
    assert.ok(!html.includes(TEST_CREDENTIALS.adminToken));
    assert.match(html, /PASS/);
  });

  it('the admission driver signs with SigV4 as VWR inlet strategies do', async () => {
    const sigv4 = await runLoadTest(
      smallRun(node.publicUrl, node.privateUrl, {
        adminToken: undefined,
        accessKeyId: TEST_CREDENTIALS.accessKeyId,
        secretAccessKey: TEST_CREDENTIALS.secretAccessKey,
        visitors: '50',
      }),
    );
    assert.deepEqual(failing(sigv4), []);
    assert.equal(sigv4.summary.visitors.served, 50);
    assert.equal(sigv4.summary.errors.total, 0);
  });

  it('refuses to start when the private API refuses the credentials', async () => {
    await assert.rejects(
      runLoadTest(smallRun(node.publicUrl, node.privateUrl, { adminToken: 'wrong-token-0123456789abcdef' })),
      (error: Error) => error instanceof LoadTestSetupError && /403/.test(error.message),
    );
  });

  it('refuses to start on an unknown event', async () => {
    await assert.rejects(
      runLoadTest(smallRun(node.publicUrl, node.privateUrl, { eventId: 'NoSuchEvent', reset: false })),
      LoadTestSetupError,
    );
  });

  it('stops at --duration and counts the rest as unfinished, not as failures', async () => {
    // A node of its own: joins of the cut run still in flight when it returns must not land in the event of
    // a run that another test starts next on the shared node (seed 12 of --test-random-seed showed it).
    const config = testConfig();
    const own = await startNode(config, { credentials: TEST_CREDENTIALS, jobs: false });
    let cut: LoadTestResult;
    try {
      cut = await runLoadTest(
        smallRun(own.publicUrl, own.privateUrl, { visitors: '2000', arrivalRate: '1000/s', admitRate: '50/s', duration: '1s' }),
      );
    } finally {
      await own.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    }
    // Admitting 2000 visitors at 50/s takes 40 s: ending by the duration with visitors unfinished is the cut.
    assert.equal(cut.summary.ended_by, 'duration');
    assert.ok(cut.summary.visitors.unfinished > 0);
    assert.ok(cut.summary.elapsed_s >= 1, 'not before the duration');
    assert.deepEqual(failing(cut), [], JSON.stringify(cut.summary.verdicts));
  });
});

describe('load test over connections that fail (polls pipelined, and through undici)', () => {
  for (const pipelining of ['8', '0']) {
    it(`pipelining ${pipelining}: dropped, malformed and closing answers to polls are retried and counted; every verdict holds`, async () => {
      const fake = await startFakeWaitingRoom('none', 'Sample', { faultyPollEvery: 50 });
      let result: LoadTestResult;
      try {
        result = await runLoadTest(
          smallRun(fake.url, fake.privateUrl, { visitors: '200', arrivalRate: '1000/s', admitRate: '200/s', adminToken: FAKE_ADMIN_TOKEN, pipelining }),
        );
      } finally {
        await fake.close();
      }
      const s = result.summary;
      assert.deepEqual(failing(result), [], JSON.stringify(s.verdicts));
      assert.equal(s.ended_by, 'journey');
      assert.equal(s.visitors.failed, 0, JSON.stringify(s.failure_reasons));
      assert.equal(s.visitors.done, 200);
      assert.equal(s.plan.pipelining, Number(pipelining));
      // The faults were met (and counted as network errors), not dodged.
      assert.ok((s.errors.by_status.network ?? 0) > 0, JSON.stringify(s.errors));
      assert.equal(s.errors.total, Object.values(s.errors.by_status).reduce((sum, n) => sum + n, 0));
      if (pipelining !== '0') assert.ok(s.errors.malformed_responses > 0, JSON.stringify(s.errors));
    });
  }
});

describe('load test against deliberately broken waiting rooms', () => {
  async function runAgainst(bug: Bug, extra: Record<string, unknown> = {}): Promise<LoadTestResult> {
    const fake = await startFakeWaitingRoom(bug);
    try {
      const fast = { visitors: '100', arrivalRate: '1000/s', admitRate: '1000/s' };
      return await runLoadTest(smallRun(fake.url, fake.privateUrl, { ...fast, adminToken: FAKE_ADMIN_TOKEN, ...extra }));
    } finally {
      await fake.close();
    }
  }

  it('the fake itself, without a bug, passes every verdict', async () => {
    const result = await runAgainst('none');
    assert.deepEqual(failing(result), []);
    assert.equal(result.summary.server_cpu, null, 'the fake publishes no /metrics');
  });

  it('a duplicate position fails "positions unique and gap-free"', async () => {
    const result = await runAgainst('duplicate-position');
    assert.deepEqual(failing(result), ['positions_unique_gap_free']);
    assert.equal(result.summary.ok, false);
    // Which two visitors got position 9 depends on the order their joins reached the fake, not on their numbers.
    const example = result.summary.verdicts.positions_unique_gap_free.examples[0] ?? '';
    const [, first, second] = /^position 9 was given to visitor #(\d+) \(.+\) and visitor #(\d+) \(.+\)$/.exec(example) ?? [];
    assert.ok(first && second && first !== second, example);
  });

  it('a different token set on re-claim fails "re-claims identical"', async () => {
    const result = await runAgainst('different-reclaim', { doubleClaimEvery: '0' });
    assert.deepEqual(failing(result), ['reclaims_identical']);
    assert.equal(result.summary.verdicts.reclaims_identical.failures, 100);
  });

  it('a different token set for a double click fails "one token set per served visitor"', async () => {
    const result = await runAgainst('different-reclaim', { reclaims: '0' });
    assert.deepEqual(failing(result), ['one_token_set_per_served_visitor']);
    assert.equal(result.summary.verdicts.one_token_set_per_served_visitor.failures, 10);
  });

  it('tokens signed by a key other than /public_key fail "tokens verify"', async () => {
    const result = await runAgainst('foreign-key');
    assert.deepEqual(failing(result), ['tokens_verify']);
    assert.equal(result.summary.verdicts.tokens_verify.failures, 300);
  });

  it('letting visitors in ahead of the serving counter fails "FIFO admission"', async () => {
    // Everyone is let in at once while the counter needs a second to reach them all: most tokens come early.
    const result = await runAgainst('ahead-of-counter', { admitRate: '100/s' });
    assert.deepEqual(failing(result), ['fifo_admission']);
    assert.ok(result.summary.verdicts.fifo_admission.failures >= 10, result.summary.verdicts.fifo_admission.detail);
  });
});
