// Part of `npm run screenshots`: docs/img/phase-<phase>-<phone|desktop>.png, the visitor's page in each phase of a
// sale (issue 33), for docs/pages.md. Each picture is the room's page as the server renders it for that phase (the
// operator's preview, GET /private/rooms/{id}/preview?phase=…, which is the page's first paint) for a room with the
// shop's words and look (`branding`), at a phone's width (390 px) and a desktop's (1280 px).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { PAGE_PHASES } from '../../src/web/page-template.ts';
import { ensurePagesBuilt, launchChromium, PHONE, SHOP_BRANDING, startWebNode } from './support.ts';

const OUT = fileURLToPath(new URL('../../docs/img/', import.meta.url));
ensurePagesBuilt();
mkdirSync(OUT, { recursive: true });
const node = await startWebNode();
const browser = await launchChromium();
const auth = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` };
const hour = (h: number) => new Date(Math.floor(Date.now() / 3_600_000 + h) * 3_600_000).toISOString().replace('.000Z', 'Z');

try {
  const response = await fetch(`${node.privateUrl}/rooms/Drop`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      prequeue_start_time: hour(1),
      event_start_time: hour(2),
      event_end_time: hour(6),
      shuffle_at_event_start: true,
      admission: 'automatic',
      new_users_per_minute: 60,
      total_active_users: 300,
      branding: SHOP_BRANDING,
    }),
  });
  if (response.status !== 201 && response.status !== 200) throw new Error(`PUT /rooms/Drop: ${response.status} ${await response.text()}`);
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', { width: 1280, height: 800 }],
  ] as const) {
    const context = await browser.newContext({ viewport, extraHTTPHeaders: auth });
    const page = await context.newPage();
    for (const phase of PAGE_PHASES) {
      await page.goto(`${node.privateUrl}/rooms/Drop/preview?phase=${phase}&lang=en`);
      await page.screenshot({ path: join(OUT, `phase-${phase}-${size}.png`) });
    }
    await context.close();
  }
  console.log(`docs/img/phase-*.png: ${PAGE_PHASES.length} phases at phone and desktop width`);
} finally {
  await browser.close();
  await node.stop();
}
