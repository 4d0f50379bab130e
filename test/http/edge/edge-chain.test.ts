// The edge chain runs its steps in order, stops at the first that answers, hands the rest to its last
// handler, lets a step act after the rest of the chain, and leaves out the steps given as undefined.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { edgeChain, type EdgeStep } from '../../../src/http/edge/edge-chain.ts';

const req = { url: '/x' } as IncomingMessage;
const res = {} as ServerResponse;

/** A step that records its turn in `seen`, answers when `answers` says so, and records when the rest returned. */
function step(name: string, seen: string[], answers: (req: IncomingMessage) => boolean = () => false): EdgeStep {
  return {
    name,
    handle: (request, response, next) => {
      assert.equal(response, res);
      seen.push(name);
      if (answers(request)) return;
      next(request, response);
      seen.push(`${name} after`);
    },
  };
}

describe('edge chain', () => {
  it('runs every step in the order given, then the last handler, when no step answers', () => {
    const seen: string[] = [];
    const chain = edgeChain([step('a', seen), step('b', seen), step('c', seen)], (request, response) => {
      assert.equal(request, req);
      assert.equal(response, res);
      seen.push('last');
    });
    chain(req, res);
    assert.deepEqual(seen, ['a', 'b', 'c', 'last', 'c after', 'b after', 'a after']);
  });

  it('stops at the step that answers: neither the later steps nor the last handler see the request', () => {
    const seen: string[] = [];
    const chain = edgeChain([step('a', seen), step('b', seen, () => true), step('c', seen)], () => seen.push('last'));
    chain(req, res);
    // The earlier step regains control once the answer is made (the request metrics count it there).
    assert.deepEqual(seen, ['a', 'b', 'a after']);
  });

  it('decides per request: a step that answers one request passes the next one on', () => {
    const seen: string[] = [];
    const chain = edgeChain([step('refuse /no', seen, (r) => r.url === '/no')], () => seen.push('last'));
    chain({ url: '/no' } as IncomingMessage, res);
    chain(req, res);
    assert.deepEqual(seen, ['refuse /no', 'refuse /no', 'last', 'refuse /no after']);
  });

  it('leaves out the steps given as undefined (nothing to do in this configuration)', () => {
    const seen: string[] = [];
    const chain = edgeChain([undefined, step('a', seen), undefined], () => seen.push('last'));
    chain(req, res);
    assert.deepEqual(seen, ['a', 'last', 'a after']);
  });

  it('is fixed when built: changing the list afterwards changes nothing', () => {
    const seen: string[] = [];
    const steps: (EdgeStep | undefined)[] = [step('a', seen)];
    const chain = edgeChain(steps, () => seen.push('last'));
    steps.push(step('late', seen, () => true));
    chain(req, res);
    assert.deepEqual(seen, ['a', 'last', 'a after']);
  });

  it('with no steps is the last handler itself', () => {
    const last = () => {};
    assert.equal(edgeChain([undefined], last), last);
  });
});
