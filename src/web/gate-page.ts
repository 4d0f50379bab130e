// The waiting page the gate (src/gate/) shows a queued visitor at the URL they asked for: the room's page
// template (src/web/page-template.ts — the same template, languages and phases the site renders in
// waiting-page.ts), with <meta name="anteroom-gate"> so that the page's script follows the place through the gate
// (the same URL with Accept: application/json) instead of the public API, and its assets under the gate's own
// path. For a browser without script it shows the visitor's own numbers and asks again by itself:
// <noscript><meta http-equiv="refresh" content="N;url=…"></noscript> (a browser running script ignores it).
//
// Cost: the page is rendered and compressed once per room settings, language, phase, reason and the emptiness of
// each visitor variable (a "shape", with a marker in place of each of the visitor's values). A request fills the
// markers in: a few string joins and one CRC-32 of the page (~10 KB), no template rendering and no compression —
// the gzip is the shape's pieces deflated once, with the visitor's values between them as stored (uncompressed)
// deflate blocks (src/web/spliced-gzip.ts). Brotli is not offered for these pages (it cannot be spliced).

import { roomPhase, roomScheduleOf } from '../domain/room-phase.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import { VISITOR_VARIABLES, escapeHtml, pagePhaseOf, renderWaitingPage, visitorVariables, type GateReason, type PageInput, type PagePhase } from './page-template.ts';
import { SplicedGzip } from './spliced-gzip.ts';
import { WEB_DIST_DIR } from './static-pages.ts';
import { loadPageAssets, type PageAssets } from './waiting-page.ts';

/** Where the gate serves the built pages' files (assets and the site page itself). */
export const GATE_ASSETS_PATH = '/_anteroom/';

export interface WaitingPageVisitor {
  /** gate: the visitor waits at the protected URL, their place kept by the gate's cookie. */
  mode: 'gate';
  /**
   * Why the page is shown: waiting in line, the room is closed, the protected site did not answer, or the room's
   * bot defence (src/gate/gate-join.ts) asks a proof of work first or refused the visitor's IP for a while.
   */
  reason: GateReason;
  /** The request's Accept-Language and ?lang= (the page's language, chosen as on the site). */
  acceptLanguage?: string | undefined;
  queryLang?: string | undefined;
  /** The place's request ID (the short queue ID) and the people still waiting ahead, when known. */
  requestId?: string | undefined;
  peopleAhead?: number | undefined;
  /** The visitor's position, once known, and the serving counter. */
  position?: number | undefined;
  serving?: number | undefined;
  /**
   * The no-script refresh: after how many seconds, to which path of this host (the gate passes the URL asked
   * for, checked by safeLocalPath; anything else goes to "/").
   */
  refresh: { seconds: number; path: string };
  /** The visitor's request (a form's POST) was not sent to the site: the page says so (`gate_unsent`). */
  unsent?: boolean | undefined;
}

export interface WaitingPage {
  contentType: string;
  /** The page as bytes, and compressed for clients that accept it. */
  body: Buffer;
  gzip: Buffer;
  br?: Buffer;
}

/** A rendered page with markers where the visitor's values go. */
interface Shape {
  /** What fills each marker, in order: a visitor variable, or the refresh meta's content. */
  slots: string[];
  gzip: SplicedGzip;
}

const assetsByRoot = new Map<string, PageAssets | null>();
/** Shapes; the registry replaces a room's settings object on every change, so a new object renders anew. */
const shapes = new Map<string, { room: RoomSettings; shape: Shape }>();
const CACHE_LIMIT = 10_000;
/** The refresh meta's content, filled in per visitor. */
const REFRESH_SLOT = 'refresh';
const marker = (name: string) => `\uE000${name}\uE001`;
const MARKER = /\uE000(\w+)\uE001/;

/** What the room's template is rendered with for this gate visitor (the site's variables, plus the gate's). */
export function gatePageInput(room: RoomSettings, visitor: WaitingPageVisitor, assets: PageAssets, phase: PagePhase, lang: string, nowMs: number): PageInput {
  return {
    room,
    phase,
    lang,
    languages: assets.languages,
    defaultTemplate: assets.template,
    nowMs,
    gate: visitor.reason,
    serving: visitor.serving,
    refreshIntervalSec: visitor.refresh.seconds,
    visitor: {
      ...(visitor.position !== undefined ? { position: visitor.position } : {}),
      ...(visitor.peopleAhead !== undefined ? { peopleAhead: visitor.peopleAhead } : {}),
      ...(visitor.requestId !== undefined ? { requestId: visitor.requestId } : {}),
    },
  };
}

/** The page for this room and visitor. */
export function renderGatePage(room: RoomSettings, visitor: WaitingPageVisitor, root: string = WEB_DIST_DIR, nowMs: number = Date.now()): WaitingPage {
  let assets = assetsByRoot.get(root);
  if (assets === undefined) {
    assets = loadPageAssets(root) ?? null;
    assetsByRoot.set(root, assets);
  }
  const lang = assets ? assets.languages.choose(visitor.queryLang, visitor.acceptLanguage) : 'en';
  const phase: PagePhase = visitor.reason === 'closed' ? 'closed' : pagePhaseOf(roomPhase(roomScheduleOf(room), Math.floor(nowMs / 1000)));
  const input = assets ? gatePageInput(room, visitor, assets, phase, lang, nowMs) : undefined;
  const values = input ? visitorVariables(input) : undefined;
  // A value is a marker only when truthy, so that a template's {{#section}} on it renders as with the value;
  // an empty one (or 0) is rendered into the shape and named in its key.
  const replace: Record<string, string> = {};
  let emptiness = '';
  if (values) {
    for (const name of VISITOR_VARIABLES) {
      if (values[name]) replace[name] = marker(name);
      else emptiness += `\n${name}=${values[name]}`;
    }
  }
  const key = `${root}\n${room.event_id}\n${lang}\n${phase}\n${visitor.reason}\n${visitor.unsent === true}${emptiness}`;
  let shape = shapes.get(key)?.room === room ? shapes.get(key)!.shape : undefined;
  if (!shape) {
    let html = input ? gateVersion(renderWaitingPage(input, replace)) : NOT_BUILT;
    if (visitor.unsent && assets) html = withUnsentNotice(html, assets.languages.strings(lang).gate_unsent ?? '');
    shape = shapeOf(withGateHead(html, room, visitor.reason));
    if (shapes.size >= CACHE_LIMIT) shapes.clear();
    shapes.set(key, { room, shape });
  }
  const filled = shape.slots.map((slot) =>
    slot === REFRESH_SLOT ? refreshContent(visitor.refresh) : escapeHtml(String(values?.[slot as keyof typeof values] ?? '')),
  );
  const { body, gzip } = shape.gzip.fill(filled);
  return { contentType: 'text/html; charset=utf-8', body, gzip };
}

/** The gate's two tags at the top of <head>: what the script follows, and the refresh for a browser without it. */
function withGateHead(html: string, room: RoomSettings, reason: GateReason): string {
  const tags =
    `<meta name="anteroom-gate" content="${reason}" data-event-id="${escapeHtml(room.event_id)}">\n    ` +
    `<noscript><meta http-equiv="refresh" content="${marker(REFRESH_SLOT)}"></noscript>`;
  // After <meta charset> when there is one (it must come within the first 1,024 bytes), else after <head>.
  const head = /<meta charset[^>]*>/i.exec(html) ?? /<head(\s[^>]*)?>/i.exec(html);
  if (head) return `${html.slice(0, head.index + head[0].length)}\n    ${tags}${html.slice(head.index + head[0].length)}`;
  // A template without <head>: the parser puts the tags in the head it makes.
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return `${html.slice(0, at)}${tags}${html.slice(at)}`;
}

function shapeOf(html: string): Shape {
  const pieces = html.split(MARKER);
  // split with a capture group: text, name, text, name, …, text.
  const texts = pieces.filter((_, i) => i % 2 === 0);
  const slots = pieces.filter((_, i) => i % 2 === 1);
  return { slots, gzip: new SplicedGzip(texts) };
}

/**
 * "N;url=<path>" for the refresh meta, escaped for the attribute. The path is this host's ("/…", never "//…"):
 * characters that could end or quote the URL are percent-encoded, then the whole is HTML-escaped.
 */
export function refreshContent(refresh: { seconds: number; path: string }): string {
  const path = refresh.path.startsWith('/') && !refresh.path.startsWith('//') ? refresh.path : '/';
  const url = path.replace(/[^A-Za-z0-9\-._~!$&()*+,;=:@/?%#[\]]/gu, (ch) => [...Buffer.from(ch)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
  return `${Math.max(1, Math.round(refresh.seconds))};url=${url.replaceAll('&', '&amp;')}`;
}

/** The notice that the visitor's request was not sent, first in the body (any template has a body). */
function withUnsentNotice(html: string, text: string): string {
  const notice = `<p class="notice warn" id="anteroom-unsent" role="alert">${text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')}</p>`;
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
