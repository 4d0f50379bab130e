// The load-test HTML report in headless Chromium (issue 16 item 7): axe-core finds 0 violations, and it fits a
// phone screen (390 px: nothing wider than the screen; wide tables scroll inside their own focusable region). The
// run has visitors who close the tab (--abandon), so the report's section on them is in the page, and so is the
// side-by-side page of bench/no-shows.ts (renderNoShowComparison).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import { parseLoadTestOptions } from '../../src/loadtest/options.ts';
import { renderReport } from '../../src/loadtest/report.ts';
import { renderNoShowComparison } from '../../src/loadtest/no-show-report.ts';
import { runLoadTest } from '../../src/loadtest/run.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';
import { launchChromium } from '../web/support.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

describe('the load-test report as a page', { timeout: 120_000 }, () => {
  let node: AnteroomNode;
  let browser: Browser;
  let html: string;
  let comparison: string;
  before(async () => {
    node = await startNode(testConfig(), { credentials: TEST_CREDENTIALS, jobs: false });
    const result = await runLoadTest(
      parseLoadTestOptions({
        target: node.publicUrl,
        privateTarget: node.privateUrl,
        visitors: '100',
        arrivalRate: '200/s',
        admitRate: '200/s',
        pollInterval: '100ms',
        duration: '20s',
        reset: true,
        adminToken: TEST_CREDENTIALS.adminToken,
        abandon: '0.3',
        comeBack: '0.5',
        comeBackAfter: '1s',
      }),
    );
    assert.ok(result.noShows !== null && result.summary.no_shows !== null);
    const runs = ['presence off', 'presence on'].map((label) => ({ label, summary: result.summary, ...result.noShows! }));
    comparison = renderNoShowComparison(runs, { command: 'node bench/no-shows.ts', note: 'load average 1.00' });
    html = renderReport(result, { command: 'anteroom loadtest --target http://127.0.0.1:8080 --visitors 100 --arrival-rate 200/s --admin-token ***' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.close();
  });

  for (const [name, viewport] of [
    ['report', { width: 1280, height: 900 }],
    ['report', { width: 390, height: 844 }],
    ['no-show comparison', { width: 390, height: 844 }],
  ] as const) {
    it(`${name}: axe-core finds 0 violations, and nothing is wider than the screen, at ${viewport.width} px`, async () => {
      const page = await browser.newPage({ viewport });
      await page.setContent(name === 'report' ? html : comparison);
      assert.equal(await page.locator('#no-show-capacity svg').count(), 1, 'the chart of capacity in use is there');
      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
        const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] } });
        return result.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
      });
      assert.deepEqual(violations, []);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= viewport.width, `${width} px wide`);
      await page.close();
    });
  }
});
