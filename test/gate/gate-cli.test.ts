// `anteroom serve --gate-port` as a process: the demo `npm start` runs (deploy/demo/sample-gate.json: the
// sample store behind the gate, admitted automatically), and a restart never costs a visitor their place.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startChildNode, type ChildNode } from '../support/child-node.ts';
import { freePort } from '../support/nginx.ts';
import { CookieJar, startOrigin } from './support.ts';

const DEMO = new URL('../../deploy/demo/sample-gate.json', import.meta.url);
const JSON_ACCEPT = { accept: 'application/json' };

async function stop(child: ChildNode): Promise<void> {
  child.process.kill('SIGTERM');
  await child.exited;
}

describe('anteroom serve --gate-port', () => {
  it('the npm start demo: the sample store behind the gate queues a browser, admits it and shows the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-gate-cli-'));
    const [port, gatePort] = [await freePort(), await freePort()];
    // npm start's file, with the public port this test got instead of 8080.
    const config = join(dir, 'sample-gate.json');
    writeFileSync(config, readFileSync(DEMO, 'utf8').replace('http://127.0.0.1:8080', `http://127.0.0.1:${port}`));
    const child = await startChildNode(['--port', String(port), '--gate-port', String(gatePort), '--config', config, '--data-dir', dir]);
    try {
      const gateLine = /gate\s+(http:\/\/\S+\/store\/)/.exec(child.output());
      assert.ok(gateLine, child.output());
      const url = gateLine[1] as string;
      assert.equal(url, `http://127.0.0.1:${gatePort}/store/`);
      const jar = new CookieJar();
      let status = '';
      // The admission job lets one visitor in per second at this rate: wait for it, bounded.
      for (let attempt = 0; attempt < 60 && status !== 'admitted'; attempt++) {
        const res = await jar.fetch(url, { headers: JSON_ACCEPT });
        status = ((await res.json()) as { status: string }).status;
        if (status !== 'admitted') await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.equal(status, 'admitted');
      const store = await jar.fetch(url);
      assert.equal(store.status, 200);
      assert.match(await store.text(), /Sample store: you are in/);
      const receipt = await jar.fetch(`http://127.0.0.1:${gatePort}/store/checkout`, { method: 'POST' });
      assert.equal(((await receipt.json()) as { result: string }).result, 'Success');
    } finally {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a restart of Anteroom keeps the visitor\'s place (the cookie key is in the store)', async () => {
    const origin = await startOrigin();
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-gate-restart-'));
    const config = join(dir, 'rooms.json');
    writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Shop', gate: { origin: origin.url, routes: [{ path: '/' }] } }] }));
    const gatePort = await freePort();
    const args = ['--gate-port', String(gatePort), '--config', config, '--data-dir', dir];
    const jar = new CookieJar();
    try {
      let child = await startChildNode(args);
      await (await fetch(`http://127.0.0.1:${gatePort}/`)).text();
      const before = (await (await jar.fetch(`http://127.0.0.1:${gatePort}/page`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
      assert.equal(before.status, 'queued');
      assert.equal(before.queue_number, 2);
      await stop(child);
      child = await startChildNode(args);
      try {
        const after = (await (await jar.fetch(`http://127.0.0.1:${gatePort}/page`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
        assert.deepEqual(after, { ...before });
      } finally {
        await stop(child);
      }
    } finally {
      await origin.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
