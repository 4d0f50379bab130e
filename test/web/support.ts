// Shared by the page tests: a node serving the pages and the sample store on the real clock (the browser signs
// SigV4 with its own clock, and the store checks token times against it), the web build, and headless Chromium
// from Debian (never downloaded).

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import type { ServerConfig } from '../../src/config/config.ts';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import { pagesBuilt, WEB_DIST_DIR } from '../../src/web/static-pages.ts';
import { webPlugins, webPrivatePlugins } from '../../src/web/index.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Stops a test at once when web/dist is missing. `npm test` builds it before the tests (`pretest`); no test
 * builds it, since another test file running meanwhile serves those files.
 */
export function ensurePagesBuilt(): void {
  if (!pagesBuilt(WEB_DIST_DIR)) throw new Error('web/dist is not built: run `npm run build:web` first (npm test does)');
}

export interface WebNode extends AnteroomNode {
  url: string;
  stop(): Promise<void>;
}

/**
 * A node on the system clock with the pages and the sample store mounted, as `anteroom serve` mounts them; unless
 * the test names its rooms, the one room is the demo's sample room (`Sample`, `sample_store`, as in
 * deploy/demo/sample-gate.json), whose turn is the sample store's purchase.
 */
export async function startWebNode(overrides: Partial<ServerConfig> = {}, options: { root?: string; jobs?: boolean } = {}): Promise<WebNode> {
  const config = testConfig({ events: [{ ...defaultSettings('Sample'), sample_store: true }], ...overrides });
  let publicUrl = '';
  const running: { node?: AnteroomNode } = {};
  const roomSettings = (eventId: string) => running.node?.room.rooms.roomSettings(eventId);
  const node = await startNode(config, {
    credentials: TEST_CREDENTIALS,
    // The jobs (automatic admission, the draw, expiry) only where a test asks for them.
    jobs: options.jobs ?? false,
    plugins: webPlugins(config, () => publicUrl, { ...(options.root === undefined ? {} : { root: options.root }), roomSettings }),
    privatePlugins: webPrivatePlugins(roomSettings, options),
  });
  running.node = node;
  publicUrl = node.publicUrl;
  return { ...node, url: node.publicUrl, stop: () => node.close() };
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Collects what a page reports as broken: console errors (CSP violations among them) and uncaught exceptions. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    // A refused request is logged by Chromium as a console error; the tests provoke those on purpose.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

export async function newPage(browser: Browser, viewport = { width: 1000, height: 900 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  return { context, page, errors: watchErrors(page) };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations of the page as it is now (WCAG 2.1 A/AA and best practices), as "rule: targets". */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}
