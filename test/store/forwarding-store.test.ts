// The decorators' base forwards every operation of the port unchanged: arguments in, answer out.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/domain/ports/store.ts';
import { ForwardingStore } from '../../src/store/forwarding-store.ts';

class Plain extends ForwardingStore {}

describe('ForwardingStore', () => {
  it('forwards each operation with its arguments and returns the wrapped store\'s answer', async () => {
    const calls: { method: string; args: unknown[] }[] = [];
    const inner = new Proxy({ description: 'inner' } as unknown as Store, {
      get: (target, method) =>
        method === 'description'
          ? target.description
          : (...args: unknown[]) => {
              calls.push({ method: String(method), args });
              return Promise.resolve(`answer of ${String(method)}`);
            },
    });
    const store = new Plain(inner);
    const methods = Object.getOwnPropertyNames(ForwardingStore.prototype).filter((m) => m !== 'constructor');
    assert.ok(methods.length >= 20, `forwards the whole port (${methods.length} operations)`);
    const operations = store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const method of methods) {
      const args = Array.from({ length: operations[method]!.length }, (_, i) => ({ argument: i, of: method }));
      const answer = await operations[method]!(...args);
      assert.equal(answer, `answer of ${method}`);
      assert.deepEqual(calls.at(-1), { method, args });
    }
    assert.equal(store.description, 'inner');
    assert.equal('peekCounters' in store, false, 'answering polls from memory is each decorator\'s own decision');
  });
});
