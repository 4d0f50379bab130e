// The layers of src/ (docs/architecture.md) are enforced by ESLint's no-restricted-imports (eslint.config.js);
// this test runs that rule over src/ so `npm test` fails on a wrong-way import, and shows the rule is live.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

const RULE = '@typescript-eslint/no-restricted-imports';
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function layerViolations(results: ESLint.LintResult[]): Promise<string[]> {
  return results.flatMap((r) => r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath}:${m.line} ${m.message}`));
}

describe('layers', () => {
  it('no file of src/ imports against the layers', async () => {
    assert.deepEqual(await layerViolations(await eslint.lintFiles(['src/**/*.ts'])), []);
  });

  it('the domain importing an adapter, a framework or the configuration is refused', async () => {
    for (const line of [
      "import type { EventBus } from '../events/bus.ts';",
      "import type { Redis } from 'ioredis';",
      "import type { FastifyInstance } from 'fastify';",
      "import type { ServerConfig } from '../../config/config.ts';",
    ]) {
      const filePath = line.includes('../../') ? 'src/domain/ports/probe.ts' : 'src/domain/probe.ts';
      const results = await eslint.lintText(`${line}\nexport type T = unknown;\n`, { filePath });
      assert.equal((await layerViolations(results)).length, 1, line);
    }
  });

  it('an adapter importing another adapter it may not use is refused; the domain is allowed', async () => {
    const wrong = await eslint.lintText("import type { HttpServerOptions } from '../../http/server.ts';\nexport type T = HttpServerOptions;\n", {
      filePath: 'src/store/redis/probe.ts',
    });
    assert.equal((await layerViolations(wrong)).length, 1);
    const right = await eslint.lintText("import type { Store } from '../../domain/ports/store.ts';\nexport type T = Store;\n", {
      filePath: 'src/store/redis/probe.ts',
    });
    assert.deepEqual(await layerViolations(right), []);
  });
  it('the authorizer package (anteroom-authorizer) imports jose and node: built-ins only, and fastify as types', async () => {
    const filePath = 'packages/authorizer/src/probe.ts';
    for (const line of ["import X from 'ioredis';", "import X from '../../../src/domain/errors.ts';", "import X from 'fastify';"]) {
      const results = await eslint.lintText(`${line}\nexport const t = X;\n`, { filePath });
      assert.equal((await layerViolations(results)).length, 1, line);
    }
    const right = await eslint.lintText(
      "import { jwtVerify } from 'jose';\nimport type { FastifyReply } from 'fastify';\nimport { createHash } from 'node:crypto';\nexport const t = [jwtVerify, createHash];\nexport type R = FastifyReply;\n",
      { filePath },
    );
    assert.deepEqual(await layerViolations(right), []);
  });
});
