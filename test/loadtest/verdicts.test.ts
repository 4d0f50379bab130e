import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { IncrementRecord, TokenStrings, Visitor } from '../../src/loadtest/records.ts';
import { visitor } from './recorded-visitor.ts';
import {
  fifoAdmission,
  onePositionPerVisitor,
  oneTokenSetPerServedVisitor,
  positionsUniqueGapFree,
  reclaimsIdentical,
  tokensVerify,
  type VerdictInput,
} from '../../src/loadtest/verdicts.ts';

const tokens = (tag: string): TokenStrings => ({ access_token: `a-${tag}`, refresh_token: `r-${tag}`, id_token: `i-${tag}` });

function input(visitors: Visitor[], fields: Partial<VerdictInput> = {}): VerdictInput {
  return { eventId: 'Sample', visitors, increments: [], initialServing: 0, expectFirstPosition: null, joinsUnanswered: 0, cutShort: false, ...fields };
}

const inc = (sentAt: number, receivedAt: number, by: number, servingAfter: number | null): IncrementRecord => ({
  sentAt,
  receivedAt,
  by,
  status: servingAfter === null ? 0 : 200,
  servingAfter,
});

describe('verdict: positions unique and gap-free', () => {
  it('passes for 1..N in any order', () => {
    const v = positionsUniqueGapFree(input([visitor(2), visitor(0), visitor(1)], { expectFirstPosition: 1 }));
    assert.equal(v.ok, true, v.detail);
    assert.match(v.detail, /3 positions 1\.\.3/);
  });

  it('fails on a duplicate and names both visitors', () => {
    const v = positionsUniqueGapFree(input([visitor(0), visitor(1), visitor(2, { position: 2 })]));
    assert.equal(v.ok, false);
    assert.equal(v.failures, 1);
    assert.match(v.examples[0]!, /position 2 was given to visitor #2 .* and visitor #3/);
  });

  it('fails on a hole, and on a block that does not start at 1 after a reset', () => {
    const gap = positionsUniqueGapFree(input([visitor(0), visitor(1, { position: 4 })]));
    assert.equal(gap.ok, false);
    assert.equal(gap.failures, 2);
    assert.match(gap.examples[0]!, /positions 2–3 belong to no visitor/);
    const shifted = positionsUniqueGapFree(input([visitor(0, { position: 7 }), visitor(1, { position: 8 })], { expectFirstPosition: 1 }));
    assert.equal(shifted.ok, false);
    assert.equal(positionsUniqueGapFree(input([visitor(0, { position: 7 }), visitor(1, { position: 8 })])).ok, true);
  });

  it('a run cut short excuses as many holes as visitors still in flight, no more', () => {
    const placed = [visitor(0), visitor(2, { position: 3 })];
    const inFlight = visitor(1, { position: null, requestId: null, state: 'joining' });
    assert.equal(positionsUniqueGapFree(input([...placed, inFlight], { cutShort: true })).ok, true);
    assert.equal(positionsUniqueGapFree(input([...placed, inFlight], { cutShort: false })).ok, false);
    assert.equal(positionsUniqueGapFree(input([...placed, visitor(1, { position: 2 }), visitor(3, { position: 5 })], { cutShort: true })).ok, false);
  });
});

describe('verdict: one position per visitor', () => {
  it('fails when /queue_num changed its answer, or a visitor who joined was never placed', () => {
    assert.equal(onePositionPerVisitor(input([visitor(0), visitor(1)])).ok, true);
    const moved = onePositionPerVisitor(input([visitor(0, { otherPositions: [5] })]));
    assert.equal(moved.ok, false);
    assert.match(moved.examples[0]!, /was told position 1, later 5/);
    const lost = onePositionPerVisitor(input([visitor(0, { position: null, state: 'failed', failure: 'queue_num answered 500' })]));
    assert.equal(lost.ok, false);
    assert.equal(onePositionPerVisitor(input([visitor(0, { position: null, state: 'placing' })], { cutShort: true })).ok, true);
  });
});

describe('verdict: FIFO admission relative to the serving counter', () => {
  // Counter: 0 → 4 (sent 50, answered 60) → 6 (sent 90, answered 120).
  const increments = [inc(50, 60, 4, 4), inc(90, 120, 2, 6)];

  it('a token is in order if the counter could have reached the position when the token was answered', () => {
    const v = fifoAdmission(input([visitor(4, { tokens: tokens('5'), tokenAt: 100 })], { increments }));
    assert.equal(v.ok, true, v.detail);
  });

  it('a token answered before any increment could have reached the position is ahead of the counter', () => {
    const v = fifoAdmission(input([visitor(4, { tokens: tokens('5'), tokenAt: 80 })], { increments }));
    assert.equal(v.ok, false);
    assert.match(v.examples[0]!, /position 5 got a token .* counter was at most 4/);
  });

  it('an increment that got no answer counts as applied (the bound stays honest)', () => {
    const v = fifoAdmission(input([visitor(4, { tokens: tokens('5'), tokenAt: 100 })], { increments: [inc(50, 60, 4, 4), inc(90, NaN, 2, null)] }));
    assert.equal(v.ok, true);
  });

  it('positions within the counter before the run may be served at once', () => {
    assert.equal(fifoAdmission(input([visitor(2, { tokens: tokens('3'), tokenAt: 1 })], { initialServing: 3 })).ok, true);
  });

  it('a claim refused after the counter was confirmed past the position is a skip', () => {
    const refusedLate = fifoAdmission(input([visitor(3, { refusedClaimsSentAt: [70] })], { increments }));
    assert.equal(refusedLate.ok, false);
    assert.match(refusedLate.examples[0]!, /position 4 was refused .* counter had reached 4/);
    // Sent before the increment's answer: the refusal may be right.
    assert.equal(fifoAdmission(input([visitor(3, { refusedClaimsSentAt: [55] })], { increments })).ok, true);
  });
});

describe('verdict: one token set per served visitor', () => {
  const increments = [inc(0, 1, 3, 3)];

  it('passes when every visitor the counter reached holds a token set of its own', () => {
    const visitors = [visitor(0, { tokens: tokens('1') }), visitor(1, { tokens: tokens('2') }), visitor(2, { tokens: tokens('3') }), visitor(3)];
    assert.equal(oneTokenSetPerServedVisitor(input(visitors, { increments })).ok, true);
  });

  it('fails for a served visitor without a token, a shared token set, or two sets from a double click', () => {
    const noToken = oneTokenSetPerServedVisitor(input([visitor(0, { state: 'failed', failure: 'generate_token answered 500' })], { increments }));
    assert.equal(noToken.ok, false);
    assert.match(noToken.examples[0]!, /was served .* but has no token: generate_token answered 500/);
    const shared = oneTokenSetPerServedVisitor(input([visitor(0, { tokens: tokens('x') }), visitor(1, { tokens: tokens('x') })], { increments }));
    assert.equal(shared.ok, false);
    const twice = oneTokenSetPerServedVisitor(input([visitor(0, { tokens: tokens('1'), claimMismatches: 1 })], { increments }));
    assert.equal(twice.ok, false);
  });

  it('a visitor still waiting when the run was cut short is not counted', () => {
    assert.equal(oneTokenSetPerServedVisitor(input([visitor(0, { state: 'waiting' })], { increments, cutShort: true })).ok, true);
  });
});

describe('verdict: re-claims identical', () => {
  it('fails on a different token set or a non-200 answer', () => {
    assert.equal(reclaimsIdentical(input([visitor(0, { tokens: tokens('1'), reclaimsDone: 3 })])).ok, true);
    assert.equal(reclaimsIdentical(input([visitor(0, { tokens: tokens('1'), reclaimsDone: 3, reclaimMismatches: 1 })])).ok, false);
    const gone = reclaimsIdentical(input([visitor(0, { tokens: tokens('1'), reclaimsDone: 3, reclaimFailures: ['410'] })]));
    assert.equal(gone.ok, false);
    assert.match(gone.examples[0]!, /re-claims answered 410/);
  });
});

describe('verdict: tokens verify against /public_key', async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), alg: 'RS256', kid: 'k1' };
  const sign = (claims: Record<string, unknown>, sub: string, kid = 'k1') =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setAudience('Sample').setSubject(sub).setIssuedAt().setExpirationTime('1h').sign(privateKey);
  async function signed(v: Visitor, override: Record<string, unknown> = {}): Promise<Visitor> {
    const set = async (use: string) => sign({ queue_position: v.position, token_use: use, ...override }, v.requestId!);
    return { ...v, tokens: { access_token: await set('access'), refresh_token: await set('refresh'), id_token: await set('id') } };
  }

  it('passes when each token verifies and names its visitor', async () => {
    const v = await tokensVerify(input([await signed(visitor(0)), await signed(visitor(1))]), jwk);
    assert.equal(v.ok, true, v.examples.join('; '));
    assert.match(v.detail, /6 tokens of 2 visitors/);
  });

  it('fails on a wrong queue_position, another visitor\'s sub, or a key that cannot be fetched', async () => {
    const wrongPosition = await tokensVerify(input([await signed(visitor(0), { queue_position: 7 })]), jwk);
    assert.equal(wrongPosition.failures, 3);
    assert.match(wrongPosition.examples[0]!, /queue_position 7 ≠ 1/);
    const stolen = await signed(visitor(1));
    const other = { ...visitor(0), tokens: stolen.tokens };
    assert.equal((await tokensVerify(input([other]), jwk)).failures, 3);
    const noKey = await tokensVerify(input([await signed(visitor(0))]), '/public_key answered 500');
    assert.equal(noKey.ok, false);
  });
});
