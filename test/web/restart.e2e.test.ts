// A visitor keeps their place through a crash and restart of the server (`anteroom serve` as a child process,
// killed with SIGKILL, started again on the same port and data directory).

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { REPO_ROOT, ensurePagesBuilt, launchChromium, newPage } from './support.ts';
import { killWithTest } from '../support/children.ts';

const ADMIN_TOKEN = 'restart-test-admin-token-0123456789';

interface Server {
  child: ChildProcess;
  url: string;
}

function serve(dataDir: string, port: number): Promise<Server> {
  // The room Sample as the demo has it (deploy/demo/sample-gate.json): its turn is the sample store's purchase.
  const events = join(dataDir, 'events.json');
  writeFileSync(events, JSON.stringify({ events: [{ event_id: 'Sample', sample_store: true }] }));
  const child = killWithTest(spawn(
    process.execPath,
    ['bin/anteroom.js', 'serve', '--port', String(port), '--data-dir', dataDir, '--config', events, '--admin-token', ADMIN_TOKEN, '--log-level', 'warn'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  ));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start within 60 s:\n${output}`)), 60_000); // a hang guard: a start takes ~1 s of CPU, much longer on a loaded machine
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /public API\s+(http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve({ child, url: match[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}):\n${output}`));
    });
  });
}

function kill(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGKILL');
  });
}

describe('a server restart during the wait', { timeout: 120_000 }, () => {
  let browser: Browser;
  let dataDir: string;
  let server: Server | undefined;

  before(async () => {
    ensurePagesBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'anteroom-restart-'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (server) await kill(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is survived: the page reconnects with the same place, is let in and buys', async () => {
    server = await serve(dataDir, 0);
    const port = Number(new URL(server.url).port);
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/waiting-room-site/`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '1', undefined, { timeout: 15_000 });
    const requestId = await page.locator('#detail-request').textContent();

    // Crash: the page notices and keeps retrying with back-off.
    await kill(server);
    await page.waitForFunction(() => /The connection was lost/.test(document.querySelector('#status')?.textContent ?? ''), undefined, {
      timeout: 15_000,
    });

    server = await serve(dataDir, port);
    const increment = await fetch(`${server.url}/private/increment_serving_counter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ event_id: 'Sample', increment_by: 1 }),
    });
    assert.deepEqual(await increment.json(), { serving_num: 1 });

    await page.getByRole('heading', { name: 'Check out now!' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#detail-request').textContent(), requestId);
    await page.getByRole('button', { name: 'Purchase now' }).click();
    await page.locator('#receipt').waitFor({ state: 'visible', timeout: 15_000 });
    assert.equal(await page.locator('#receipt-result').textContent(), 'Success');
    assert.equal(await page.locator('#receipt-order').textContent(), requestId);
    await context.close();
  });
});
