// The built pages stay small, cacheable and self-contained (the limits for a page under a surge).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { WEB_DIST_DIR } from '../../src/web/static-pages.ts';
import { ensurePagesBuilt } from './support.ts';

// Issue 16: the waiting page's own JS+CSS (the operator's template aside) within 15 KB gzipped.
const BUDGET_BYTES = 15 * 1024;

/** The assets an HTML page loads (scripts, preloads, stylesheets), as paths under web/dist. */
function assetsOf(page: string): string[] {
  const html = readFileSync(join(WEB_DIST_DIR, page, 'index.html'), 'utf8');
  return [...html.matchAll(/(?:src|href)="\.\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('built pages', () => {
  before(() => ensurePagesBuilt());

  it(`the waiting-room page ships at most ${BUDGET_BYTES / 1024} KB of JS+CSS, gzipped`, () => {
    const assets = assetsOf('waiting-room-site');
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), assets.join(', '));
    const gzipped = assets.reduce((sum, asset) => sum + gzipSync(readFileSync(join(WEB_DIST_DIR, asset)), { level: 9 }).length, 0);
    assert.ok(gzipped <= BUDGET_BYTES, `${gzipped} bytes`);
  });

  it('every asset name carries a content hash (so it can be cached as immutable)', () => {
    for (const file of filesUnder(join(WEB_DIST_DIR, 'assets'))) {
      // Their brotli and gzip forms (<name>.br, <name>.gz) carry the same name.
      assert.match(file, /-[A-Za-z0-9_-]{8}\.(js|css)(\.br|\.gz)?$/, file);
    }
  });

  it('nothing is loaded from a third-party host', () => {
    // The compressed forms (.br, .gz) are these same files: the static-pages test checks they decompress to them.
    for (const file of filesUnder(WEB_DIST_DIR).filter((name) => !/\.(br|gz)$/.test(name))) {
      const text = readFileSync(file, 'utf8');
      const urls = [...text.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]);
      assert.deepEqual(urls, [], file);
    }
  });
});
