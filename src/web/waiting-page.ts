// Serves the waiting-room page rendered from its template (src/web/page-template.ts): at /waiting-room-site/
// for the site (the room named by ?eventId=, VWR's parameter; the language by ?lang= or Accept-Language), and
// at GET <private>/rooms/{id}/preview?phase=…&lang=… for the operator, with sample numbers.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Errors } from '../domain/errors.ts';
import { brandingStyle } from '../domain/page-branding.ts';
import { roomPhase, roomScheduleOf } from '../domain/room-phase.ts';
import { DEFAULT_EVENT_ID, type RoomSettings } from '../domain/room-settings.ts';
import { Languages, PAGE_PHASES, pagePhaseOf, renderWaitingPage, templateProblem, type PageInput, type PagePhase } from './page-template.ts';
import { staticFile, WEB_DIST_DIR, type StaticFile } from './static-pages.ts';

export interface WaitingPageOptions {
  /** Directory of the built pages. Default: web/dist of this package. */
  root?: string;
  /** The room's settings (undefined: unknown room, or the node is not up yet). */
  roomSettings: (eventId: string) => RoomSettings | undefined;
  /** Milliseconds since the epoch. Default Date.now. */
  clock?: () => number;
}

/** The default template and the translations, as built (undefined when the build has none). */
export interface PageAssets {
  template: string;
  languages: Languages;
}

export function loadPageAssets(root: string = WEB_DIST_DIR): PageAssets | undefined {
  const dir = join(root, 'waiting-room-site');
  if (!existsSync(join(dir, 'page.mustache')) || !existsSync(join(dir, 'i18n', 'en.json'))) return undefined;
  return { template: readFileSync(join(dir, 'page.mustache'), 'utf8'), languages: Languages.fromDir(join(dir, 'i18n')) };
}

const EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;
/**
 * An operator's template may style itself inline and show images from anywhere over https (a logo on their CDN);
 * scripts still come only from this server (the page's own), and nothing may frame it.
 */
export const TEMPLATE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  'connect-src *',
  "img-src 'self' data: https:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
/**
 * The default page of a room with `branding`: the site's policy, plus its logo from any https: host and its
 * colours' <style> block by hash (its text is only validated colours: src/domain/page-branding.ts).
 */
export function brandedPolicy(room: RoomSettings): string {
  const style = brandingStyle(room.branding);
  const styleSrc = style === '' ? "style-src 'self'" : `style-src 'self' 'sha256-${createHash('sha256').update(style).digest('base64')}'`;
  return [
    "default-src 'self'",
    'connect-src *',
    "img-src 'self' data: https:",
    styleSrc,
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Rendered pages kept (per room settings, language and phase); a page depends on nothing else. */
const CACHE_LIMIT = 1_000;

/** The site's renderer, for `staticPages({ waitingPage })`. */
export function waitingPageRenderer(options: WaitingPageOptions): ((request: FastifyRequest) => StaticFile | undefined) | undefined {
  const assets = loadPageAssets(options.root);
  if (!assets) return undefined;
  const clock = options.clock ?? Date.now;
  const cache = new Map<string, { room: RoomSettings | undefined; file: StaticFile }>();
  return (request) => {
    const query = request.query as Record<string, unknown>;
    const eventId = typeof query.eventId === 'string' && EVENT_ID.test(query.eventId) ? query.eventId : DEFAULT_EVENT_ID;
    const room = options.roomSettings(eventId);
    const lang = assets.languages.choose(query.lang, request.headers['accept-language']);
    const now = clock();
    const phase = room ? pagePhaseOf(roomPhase(roomScheduleOf(room), Math.floor(now / 1000))) : 'waiting';
    const key = `${eventId}\n${lang}\n${phase}`;
    const cached = cache.get(key);
    // The registry replaces a room's settings object on every change: the same object, the same page.
    if (cached && cached.room === room) return cached.file;
    const html = renderWaitingPage({
      room: room ?? { event_id: eventId },
      phase,
      lang,
      languages: assets.languages,
      defaultTemplate: assets.template,
      nowMs: now,
    });
    const file = {
      ...staticFile(Buffer.from(html), 'index.html', 5),
      vary: 'accept-encoding, accept-language',
      ...(room?.page !== undefined ? { csp: TEMPLATE_CONTENT_SECURITY_POLICY } : room?.branding ? { csp: brandedPolicy(room) } : {}),
    };
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, { room, file });
    return file;
  };
}

/** The preview's policy: no script at all; a branded room's logo and colours as on the site. */
function previewPolicy(room: RoomSettings): string {
  const style = brandingStyle(room.branding);
  const styleSrc = style === '' ? "style-src 'self'" : `style-src 'self' 'sha256-${createHash('sha256').update(style).digest('base64')}'`;
  return `default-src 'self'; img-src 'self' data:${room.branding?.logo_url ? ' https:' : ''}; ${styleSrc}; script-src 'none'; base-uri 'none'`;
}

/** Sample numbers a preview shows, per phase. */
function previewInput(phase: PagePhase): Pick<PageInput, 'serving' | 'pacePerMinute' | 'visitor'> {
  if (phase === 'prequeue' || phase === 'before') return {};
  if (phase === 'your_turn') return { serving: 1_250, visitor: { position: 1_234 } };
  return { serving: 1_200, pacePerMinute: 30, visitor: { position: 1_342, waitLowSec: 240, waitHighSec: 420, requestId: '6f1c2a3e-5b7d-4c1e-9a2b-0d3c4e5f6a7b' } };
}

/** GET <private>/rooms/{id}/preview: the room's page as a visitor would see it in a phase (a private plugin). */
export function previewRoute(options: Omit<WaitingPageOptions, 'roomSettings'> & { roomSettings: WaitingPageOptions['roomSettings'] }) {
  return (app: FastifyInstance): void => {
    let assets: PageAssets | undefined;
    app.get('/rooms/:event_id/preview', async (request, reply) => {
      assets ??= loadPageAssets(options.root);
      const { event_id: eventId } = request.params as { event_id: string };
      const query = request.query as Record<string, unknown>;
      const room = options.roomSettings(eventId);
      if (!room) {
        throw Errors.unknownRoom();
      }
      if (!assets) return reply.code(503).header('content-type', 'text/plain; charset=utf-8').send('The pages are not built: run npm run build:web.');
      const asked = typeof query.phase === 'string' ? query.phase : 'waiting';
      if (!(PAGE_PHASES as readonly string[]).includes(asked)) {
        return reply.code(400).send({ error: `phase must be one of ${PAGE_PHASES.join(', ')}` });
      }
      const phase = asked as PagePhase;
      const problem = room.page === undefined ? undefined : templateProblem(room.page);
      if (problem) return reply.code(400).send({ error: `The room's page template does not parse (${problem}); visitors see the default page.` });
      const html = renderWaitingPage({
        room,
        phase,
        lang: assets.languages.choose(query.lang, request.headers['accept-language']),
        languages: assets.languages,
        defaultTemplate: assets.template,
        nowMs: (options.clock ?? Date.now)(),
        ...previewInput(phase),
      })
        // A still picture: no script (it would start a visit), and the styles from where the site serves them.
        .replace(/<script type="module"[^>]*><\/script>/g, '')
        .replace(/(href|src)="\.\.\/assets\//g, '$1="/assets/');
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', previewPolicy(room))
        .header('x-content-type-options', 'nosniff')
        .send(html);
    });
  };
}
