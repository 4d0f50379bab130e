// Which waiting page a room's visitor gets, in one place. Today there is one page, the waiting-room site's own
// (web/waiting-room-site/, built to web/dist/), served by the site at /waiting-room-site/ and by the gate at
// whatever URL the visitor asked for; in the gate it finds <meta name="anteroom-gate"> and follows its place
// through the gate instead of the public API. A server-rendered template (per room, per language) replaces
// this module's body, not its callers.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { RoomSettings } from '../domain/room-settings.ts';
import { WEB_DIST_DIR } from './static-pages.ts';

/** Where the gate serves the built pages' files (assets and the site page itself). */
export const GATE_ASSETS_PATH = '/_anteroom/';

export interface WaitingPageVisitor {
  /** gate: the visitor waits at the protected URL, their place kept by the gate's cookie. */
  mode: 'gate';
  /** Why the page is shown: waiting in line, the room is closed, or the protected site did not answer. */
  reason: 'queued' | 'closed' | 'origin-down';
}

export interface WaitingPage {
  contentType: string;
  /** The page as bytes, and compressed once (brotli, gzip) for clients that accept it. */
  body: Buffer;
  br: Buffer;
  gzip: Buffer;
}

const cache = new Map<string, string>();
/** Pages as sent, per room and reason: a surge of waiting visitors costs no rendering, encoding or compression. */
const rendered = new Map<string, WaitingPage>();

/** The page for this room and visitor. */
export function renderWaitingPage(room: RoomSettings, visitor: WaitingPageVisitor, root: string = WEB_DIST_DIR): WaitingPage {
  let html = cache.get(root);
  if (html === undefined) {
    const file = join(root, 'waiting-room-site', 'index.html');
    html = existsSync(file) ? gateVersion(readFileSync(file, 'utf8')) : NOT_BUILT;
    cache.set(root, html);
  }
  const key = `${root}\n${room.event_id}\n${visitor.reason}`;
  let page = rendered.get(key);
  if (page === undefined) {
    const meta = `<meta name="anteroom-gate" content="${visitor.reason}" data-event-id="${escapeAttribute(room.event_id)}">`;
    const body = Buffer.from(html.replace('<head>', `<head>\n    ${meta}`));
    page = {
      contentType: 'text/html; charset=utf-8',
      body,
      br: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      gzip: gzipSync(body, { level: 9 }),
    };
    if (rendered.size > 10_000) rendered.clear();
    rendered.set(key, page);
  }
  return page;
}

/** The built page's relative asset URLs ("../assets/…") made absolute under the gate's own path. */
function gateVersion(html: string): string {
  return html.replaceAll(/(src|href)="\.\.\/assets\//g, `$1="${GATE_ASSETS_PATH}assets/`);
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><title>Waiting room</title></head><body><p>You are in line. This page reloads itself; the full page needs <code>npm run build:web</code>.</p></body></html>';

function escapeAttribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}
