// Shared by the page tests: a node serving the pages and the sample store on the real clock (the browser signs
// SigV4 with its own clock, and the store checks token times against it), the web build, and headless Chromium
// from Debian (never downloaded).

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before } from 'node:test';
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

/** How long a page test waits for one thing to appear. */
export const PAGE_TIMEOUT = 20_000;

/**
 * One node serving the pages and one Chromium for the tests of the enclosing describe(): started in its before(),
 * stopped in its after(). Read `.node` and `.browser` inside the tests.
 */
export function pagesInChromium(
  overrides: Partial<ServerConfig> = {},
  options: { jobs?: boolean } = {},
): { readonly node: WebNode; readonly browser: Browser } {
  const running: { node?: WebNode; browser?: Browser } = {};
  before(async () => {
    ensurePagesBuilt();
    running.node = await startWebNode(overrides, options);
    running.browser = await launchChromium();
  });
  after(async () => {
    await running.browser?.close();
    await running.node?.stop();
  });
  return {
    get node() {
      if (!running.node) throw new Error('the node is started in before()');
      return running.node;
    },
    get browser() {
      if (!running.browser) throw new Error('Chromium is launched in before()');
      return running.browser;
    },
  };
}

/** The trimmed text of the first element matching `selector`. */
export async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).textContent())?.trim() ?? '';
}

/** Waits until the text of `selector` matches `expected` (a string: contained in it). */
export async function waitForText(page: Page, selector: string, expected: string | RegExp, timeout = PAGE_TIMEOUT): Promise<void> {
  await page.waitForFunction(
    ({ selector, source, flags }) => new RegExp(source, flags).test(document.querySelector(selector)?.textContent ?? ''),
    typeof expected === 'string'
      ? { selector, source: expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), flags: '' }
      : { selector, source: expected.source, flags: expected.flags },
    { timeout },
  );
}

/** A private API call with the admin token: its status and parsed JSON body. */
export async function adminCall(node: WebNode, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${node.privateUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const textBody = await response.text();
  return { status: response.status, body: (textBody === '' ? {} : JSON.parse(textBody)) as Record<string, unknown> };
}

/**
 * Opens the control panel and presses Connect: with the access key pair (`secret`, every call signed with SigV4)
 * or the admin token. Does not wait for the answer (a test of wrong credentials waits for the error).
 */
export async function connectPanel(page: Page, url: string, auth: { sigv4: string } | 'token'): Promise<void> {
  await page.goto(`${url}/control-panel/`);
  if (auth === 'token') {
    await page.getByRole('radio', { name: 'Admin token (Bearer)' }).check();
    await page.getByLabel('Admin token', { exact: true }).fill(TEST_CREDENTIALS.adminToken);
  } else {
    await page.getByLabel('Access key ID').fill(TEST_CREDENTIALS.accessKeyId);
    await page.getByLabel('Secret access key').fill(auth.sigv4);
  }
  await page.getByRole('button', { name: 'Connect', exact: true }).click();
}

/** A shop's words and look for a room (`branding`): the sale-day page tests and the phase screenshots (docs/pages.md). */
export const SHOP_BRANDING = {
  title: 'Sneaker drop',
  site_name: 'Kicks & Co',
  message: 'One pair per customer.',
  paused_message: 'Payment provider hiccup: back in a few minutes.',
  closed_message: 'Sold out — thank you for waiting!',
  link_url: 'https://kicks.example/',
  link_text: 'Back to Kicks & Co',
  colors: { accent: '#7a1f5c', header_background: '#202020' },
} as const;

/** The viewports the page tests and screenshots use: a phone's width and a desktop's. */
export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 900 } as const;
