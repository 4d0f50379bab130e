// One Lambda function's execution environment for production-wiring.test.ts: a fresh Node process whose
// environment is the function's (set by the test), running the real exported handler of one module of
// src/aws, so that its production wiring (openAwsParts, the default AWS SDK clients, sqsIntakeQueue,
// withCdnPurge) is what runs. Argument: the module (public-api, private-api, intake-consumer, jobs or oidc).
//
// Protocol: one JSON invocation per stdin line, {"id": n, "handler": "<export>", "event": {...}}, handled one
// at a time as Lambda does; one stdout line per invocation, RESULT_PREFIX + {"id": n, "result": ...} or
// {"id": n, "error": "..."} (a handler that threw). The prefix keeps the answers apart from anything else
// the code may print.

import { createInterface } from 'node:readline';

export const RESULT_PREFIX = '@@anteroom-invocation ';

type Handler = (event: unknown) => Promise<unknown>;

const modules: Record<string, () => Promise<Record<string, unknown>>> = {
  'public-api': () => import('../../src/aws/public-api.ts'),
  'private-api': () => import('../../src/aws/private-api.ts'),
  'intake-consumer': () => import('../../src/aws/intake-consumer.ts'),
  jobs: () => import('../../src/aws/jobs.ts'),
  oidc: () => import('../../src/aws/oidc.ts'),
};

// Only when run as the child: the test file imports RESULT_PREFIX from here.
if (import.meta.main) {
  const name = process.argv[2] ?? '';
  const load = modules[name];
  if (!load) throw new Error(`unknown handler module "${name}"`);
  const handlers = await load();
  const write = (answer: object) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(answer)}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { id, handler, event } = JSON.parse(line) as { id: number; handler: string; event: unknown };
    const fn = handlers[handler];
    try {
      if (typeof fn !== 'function') throw new Error(`${name} exports no handler "${handler}"`);
      write({ id, result: (await (fn as Handler)(event)) ?? null });
    } catch (error) {
      write({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }
}
