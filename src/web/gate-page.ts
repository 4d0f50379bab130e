// The waiting page the gate (src/gate/) shows a queued visitor at the URL they asked for: the room's page
// template (src/web/page-template.ts — the same template, languages and phases the site renders in
// waiting-page.ts), with <meta name="anteroom-gate"> so that the page's script follows the place through the gate
// (the same URL with Accept: application/json) instead of the public API, and its assets under the gate's own
// path. Rendered pages are kept per room settings, language, phase and reason, and compressed once: a surge of
// waiting visitors costs no rendering, encoding or compression.

import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { roomPhase, roomScheduleOf } from '../domain/room-phase.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import { pagePhaseOf, renderWaitingPage, type PagePhase } from './page-template.ts';
import { WEB_DIST_DIR } from './static-pages.ts';
import { loadPageAssets, type PageAssets } from './waiting-page.ts';

/** Where the gate serves the built pages' files (assets and the site page itself). */
export const GATE_ASSETS_PATH = '/_anteroom/';

export interface WaitingPageVisitor {
  /** gate: the visitor waits at the protected URL, their place kept by the gate's cookie. */
  mode: 'gate';
  /** Why the page is shown: waiting in line, the room is closed, or the protected site did not answer. */
  reason: 'queued' | 'closed' | 'origin-down';
  /** The request's Accept-Language (the page's language, as on the site). */
  acceptLanguage?: string | undefined;
  /** The visitor's request (a form's POST) was not sent to the site: the page says so (`gate_unsent`). */
  unsent?: boolean | undefined;
}

export interface WaitingPage {
  contentType: string;
  /** The page as bytes, and compressed once (brotli, gzip) for clients that accept it. */
  body: Buffer;
  br: Buffer;
  gzip: Buffer;
}

const assetsByRoot = new Map<string, PageAssets | null>();
/** Pages as sent; the registry replaces a room's settings object on every change, so a new object renders anew. */
const rendered = new Map<string, { room: RoomSettings; page: WaitingPage }>();
const CACHE_LIMIT = 10_000;

/** The page for this room and visitor. */
export function renderGatePage(room: RoomSettings, visitor: WaitingPageVisitor, root: string = WEB_DIST_DIR, nowMs: number = Date.now()): WaitingPage {
  let assets = assetsByRoot.get(root);
  if (assets === undefined) {
    assets = loadPageAssets(root) ?? null;
    assetsByRoot.set(root, assets);
  }
  const lang = assets ? assets.languages.choose(undefined, visitor.acceptLanguage) : 'en';
  const phase: PagePhase = visitor.reason === 'closed' ? 'closed' : pagePhaseOf(roomPhase(roomScheduleOf(room), Math.floor(nowMs / 1000)));
  const key = `${root}\n${room.event_id}\n${lang}\n${phase}\n${visitor.reason}\n${visitor.unsent === true}`;
  const cached = rendered.get(key);
  if (cached && cached.room === room) return cached.page;
  const html = assets
    ? gateVersion(renderWaitingPage({ room, phase, lang, languages: assets.languages, defaultTemplate: assets.template, nowMs }))
    : NOT_BUILT;
  const meta = `<meta name="anteroom-gate" content="${visitor.reason}" data-event-id="${escapeAttribute(room.event_id)}">`;
  let withMeta = html.replace('<head>', `<head>\n    ${meta}`);
  if (visitor.unsent && assets) withMeta = withUnsentNotice(withMeta, assets.languages.strings(lang).gate_unsent ?? '');
  const body = Buffer.from(withMeta);
  const page: WaitingPage = {
    contentType: 'text/html; charset=utf-8',
    body,
    br: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzip: gzipSync(body, { level: 9 }),
  };
  if (rendered.size >= CACHE_LIMIT) rendered.clear();
  rendered.set(key, { room, page });
  return page;
}

/** The notice that the visitor's request was not sent, first in the body (any template has a body). */
function withUnsentNotice(html: string, text: string): string {
  const notice = `<p class="notice warn" id="anteroom-unsent" role="alert">${escapeAttribute(text).replaceAll('>', '&gt;')}</p>`;
  const body = /<body\b[^>]*>/i.exec(html);
  if (!body) return notice + html;
  const at = body.index + body[0].length;
  return `${html.slice(0, at)}\n    ${notice}${html.slice(at)}`;
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
