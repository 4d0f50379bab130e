// The waiting-room page as a template: one function renders the page a visitor sees, for the waiting-room site
// (GET /waiting-room-site/), for the gate, and for the operator's preview (GET /private/rooms/{id}/preview).
// The template is the room's own (`page` setting) or the default one (web/waiting-room-site/index.html, built
// into web/dist/waiting-room-site/page.mustache); it is Mustache, which escapes every {{variable}} by default.
// The variables are documented in docs/pages.md ("Templates"); translations are one JSON file per language
// (web/waiting-room-site/i18n/<lang>.json), numbers and times are formatted with Intl.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import { createHash } from 'node:crypto';
import { brandingStyle } from '../domain/page-branding.ts';
import { peopleAhead as peopleStillAhead } from '../domain/people-ahead.ts';
import type { RoomPhase } from '../domain/room-phase.ts';
import type { RoomSettings } from '../domain/room-settings.ts';

/** The phases a page is rendered for (the room's phase, or the visitor's when known). */
export const PAGE_PHASES = ['before', 'prequeue', 'waiting', 'your_turn', 'paused', 'closed', 'ended'] as const;
export type PagePhase = (typeof PAGE_PHASES)[number];

/** The largest template a room may hold (the `page` setting), in characters. */
export const MAX_TEMPLATE_CHARS = 1024 * 1024;

export type Strings = Record<string, string>;

/** The translations: language tag → strings. English is the reference every other language must match. */
export class Languages {
  readonly byTag: ReadonlyMap<string, Strings>;

  constructor(byTag: Map<string, Strings>) {
    if (!byTag.has('en')) throw new Error('the translations need en.json');
    this.byTag = byTag;
  }

  /** Reads every <lang>.json of a directory. */
  static fromDir(dir: string): Languages {
    const byTag = new Map<string, Strings>();
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
      byTag.set(name.slice(0, -'.json'.length), JSON.parse(readFileSync(join(dir, name), 'utf8')) as Strings);
    }
    return new Languages(byTag);
  }

  tags(): string[] {
    return [...this.byTag.keys()];
  }

  strings(tag: string): Strings {
    return { ...this.byTag.get('en')!, ...this.byTag.get(tag) };
  }

  /**
   * The language of a request: ?lang= when it names one we have, else the best of Accept-Language (by q, then
   * order; "pt-BR" matches "pt"), else English.
   */
  choose(queryLang: unknown, acceptLanguage: string | string[] | undefined): string {
    const known = (tag: string): string | undefined => {
      const lower = tag.trim().toLowerCase();
      if (this.byTag.has(lower)) return lower;
      const base = lower.split('-')[0]!;
      return this.byTag.has(base) ? base : undefined;
    };
    if (typeof queryLang === 'string' && queryLang !== '') {
      const tag = known(queryLang);
      if (tag) return tag;
    }
    const ranked = String(acceptLanguage ?? '')
      .split(',')
      .map((part, index) => {
        const [tag = '', ...params] = part.trim().split(';');
        const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
        return { tag, q: q === undefined ? 1 : Number(q.slice(2)) || 0, index };
      })
      .filter((entry) => entry.tag !== '' && entry.tag !== '*' && entry.q > 0)
      .sort((a, b) => b.q - a.q || a.index - b.index);
    for (const entry of ranked) {
      const tag = known(entry.tag);
      if (tag) return tag;
    }
    return 'en';
  }
}

/** What is known of one visitor (the gate and the preview know it; the site's page learns it in the browser). */
export interface PageVisitor {
  position?: number;
  /** People still waiting ahead, when the server counted them (src/domain/people-ahead.ts); else position − serving − 1. */
  peopleAhead?: number;
  /** The visitor's request ID (the short queue ID is shown from it). */
  requestId?: string;
  /** Estimated wait, seconds: the early and the late end. */
  waitLowSec?: number;
  waitHighSec?: number;
}

export interface PageInput {
  room: Pick<RoomSettings, 'event_id' | 'event_start_time' | 'event_end_time' | 'allowed_api_origins'> &
    Partial<Pick<RoomSettings, 'prequeue_start_time' | 'shuffle_at_event_start' | 'branding' | 'admission' | 'sample_store' | 'allowed_return_origins'>> & { page?: string | undefined };
  phase: PagePhase;
  lang: string;
  languages: Languages;
  /** The default template (used when the room has no `page`). */
  defaultTemplate: string;
  /** The serving counter, when known. */
  serving?: number;
  /** Visitors let in per minute lately, when known. */
  pacePerMinute?: number;
  visitor?: PageVisitor;
  /** The room's generation (changes at each reset), for the page to notice a restart. */
  generation?: string;
  /** How often a page without live updates should reload, seconds. Default 30. */
  refreshIntervalSec?: number;
  /** Set when the gate renders the page, with why it is shown (src/web/gate-page.ts). */
  gate?: GateReason | undefined;
  /** Now, ms since the epoch (for the pre-queue countdown). */
  nowMs: number;
}

/**
 * Why the gate shows the page: waiting in line, the room is closed, the protected site did not answer, or the
 * room's bot defence (src/gate/gate-join.ts) asks a proof of work first or refused the visitor's IP for a while.
 */
export type GateReason = 'queued' | 'before' | 'closed' | 'origin-down' | 'challenge' | 'limited';

/**
 * The variables that depend on the visitor and the moment rather than on the room, language and phase: the gate
 * renders a room's page once with markers in their place and fills them in per request (src/web/gate-page.ts).
 */
export const VISITOR_VARIABLES = [
  'position',
  'position_text',
  'serving',
  'serving_text',
  'people_ahead',
  'people_ahead_text',
  'queue_id',
  'queue_id_hidden',
  'request_id',
  'draw_check_url',
  'refresh_interval_seconds',
  'gate_noscript',
] as const;
export type VisitorVariable = (typeof VISITOR_VARIABLES)[number];

const numberFormats = new Map<string, Intl.NumberFormat>();
/** A number formatter per language, made once (the gate formats a visitor's numbers on every page it sends). */
function numberFormat(lang: string): Intl.NumberFormat {
  let format = numberFormats.get(lang);
  if (!format) {
    format = new Intl.NumberFormat(lang);
    numberFormats.set(lang, format);
  }
  return format;
}

/** The visitor's variables (VISITOR_VARIABLES), unescaped. */
export function visitorVariables(input: PageInput): Record<VisitorVariable, string | number> {
  const t = input.languages.strings(input.lang);
  const number = numberFormat(input.lang);
  const position = input.visitor?.position;
  const ahead =
    input.visitor?.peopleAhead ?? (position !== undefined && input.serving !== undefined ? peopleAhead(position, input.serving) : undefined);
  const refresh = input.refreshIntervalSec ?? 30;
  return {
    position: position ?? '',
    position_text: position === undefined ? '…' : number.format(position),
    serving: input.serving ?? '',
    serving_text: input.serving === undefined ? '…' : number.format(input.serving),
    people_ahead: ahead ?? '',
    people_ahead_text: ahead === undefined ? '…' : number.format(ahead),
    queue_id: input.visitor?.requestId === undefined ? '' : queueId(input.visitor.requestId),
    queue_id_hidden: input.visitor?.requestId === undefined ? 'hidden' : '',
    // Behind the gate only: the visitor's own request ID (the gate's page is theirs alone and never cached), which
    // their HttpOnly cookie hides from them — to check their place in the draw, also once the cookie is gone.
    request_id: input.gate === undefined ? '' : (input.visitor?.requestId ?? ''),
    draw_check_url: drawCheckUrl(input),
    refresh_interval_seconds: refresh,
    gate_noscript: input.gate === undefined ? '' : [gateSituation(input, t), fill(t.refresh_note!, { s: number.format(refresh) })].filter(Boolean).join(' '),
  };
}

/**
 * Where a visitor checks the draw (web/draw-check): on the site, the check page beside the waiting page (its
 * script adds the public API and the visitor's request ID); behind the gate, GET /_anteroom/draw, which brings the
 * visitor there with the ID from their cookie — and with the ID in the link's fragment (never sent to a server)
 * when the gate knows it, so that it still works once the cookie is gone (after the visitor was let in).
 */
function drawCheckUrl(input: PageInput): string {
  if (input.room.shuffle_at_event_start !== true) return '';
  const room = encodeURIComponent(input.room.event_id);
  if (input.gate === undefined) return `../draw-check/?event_id=${room}`;
  const id = input.visitor?.requestId;
  return `/_anteroom/draw?event_id=${room}${id === undefined ? '' : `#request_id=${encodeURIComponent(id)}`}`;
}

/** What a visitor of the gate without script reads besides the cards: why the page is shown, when not plain. */
function gateSituation(input: PageInput, t: Strings): string {
  if (input.gate === 'origin-down') return t.origin_down!;
  if (input.gate === 'queued' && input.visitor?.position === undefined) {
    return input.phase === 'prequeue' ? fill(t.prequeue_draw!, { start: utcTime(input.lang, input.room.event_start_time) || '…' }) : t.looking_up!;
  }
  return '';
}

/** The page phase of a room phase, when no visitor is known. */
export function pagePhaseOf(phase: RoomPhase): PagePhase {
  switch (phase) {
    case 'before':
      return 'before';
    case 'prequeue':
      return 'prequeue';
    case 'paused':
      return 'paused';
    case 'closed':
      return 'closed';
    case 'ended':
      return 'ended';
    default:
      return 'waiting';
  }
}

/** Replaces {name} placeholders (the translations' syntax). */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/**
 * The variables a template is rendered with (docs/pages.md lists them). Numbers come raw and as text formatted
 * for the language; every phase is also a boolean (`phase_waiting`, …) for Mustache sections.
 */
export function pageVariables(input: PageInput): Record<string, unknown> {
  const t = input.languages.strings(input.lang);
  const number = numberFormat(input.lang);
  const room = input.room;
  const time = (iso: string | undefined) => utcTime(input.lang, iso);
  const position = input.visitor?.position;
  // Before the pre-queue opens: a countdown to the opening; in the pre-queue: to the start (and the draw).
  const opensAt = room.prequeue_start_time ?? room.event_start_time;
  const countdownTo = input.phase === 'before' ? opensAt : input.phase === 'prequeue' ? room.event_start_time : undefined;
  const countdownMs = countdownTo === undefined ? undefined : Date.parse(countdownTo);
  const countdown = countdownMs !== undefined && countdownMs > input.nowMs ? Math.ceil((countdownMs - input.nowMs) / 1000) : undefined;
  const low = input.visitor?.waitLowSec;
  const high = input.visitor?.waitHighSec;
  // "Paused" only while the room is paused; before the start, the start (web/waiting-room-site/phase-view.ts waitWords).
  const waitText =
    input.phase === 'paused'
      ? t.paused!
      : input.phase === 'prequeue' || input.phase === 'before'
        ? t.waiting_start!
        : low !== undefined && high !== undefined
          ? formatWait(low, high, input.lang, t)
          : t.estimating!;
  const pace = input.pacePerMinute;
  const paceRounded = pace === undefined ? undefined : pace >= 10 ? Math.round(pace) : Math.round(pace * 10) / 10;
  const start = time(room.event_start_time);
  const end = time(room.event_end_time);
  const sampleStore = room.sample_store === true;
  const phaseNotice = phaseSentence(input.phase, t, { start: start || '…', opens: time(opensAt) || '…', draw: room.shuffle_at_event_start === true, sampleStore });
  const eventTimes = start && end ? fill(t.event_times!, { start, end }) : '';
  const stringsForScript = { ...t, lang: input.lang };
  const branding = room.branding;
  const title = branding?.title ?? t.heading!;
  const style = brandingStyle(branding);
  const ending = input.phase === 'closed' || input.phase === 'ended';
  // Behind the gate the visitor holds a place already: the queue card (the numbers, or "…" until a drawn room
  // numbers its pre-queue) while waiting, no card otherwise; never the site's Reserve.
  const inLine = input.gate === 'queued' && (input.phase === 'waiting' || input.phase === 'prequeue' || input.phase === 'paused');
  const siteInLine = input.phase === 'waiting' || input.phase === 'paused';
  return {
    event_id: room.event_id,
    lang: input.lang,
    dir: t.dir === 'rtl' ? 'rtl' : 'ltr',
    t,
    phase: input.phase,
    ...Object.fromEntries(PAGE_PHASES.map((p) => [`phase_${p}`, p === input.phase])),
    phase_notice: phaseNotice,
    gate: input.gate !== undefined,
    // The room's words and look (src/domain/page-branding.ts), each escaped by Mustache like every variable.
    title,
    page_title: branding?.site_name ? `${title} · ${branding.site_name}` : title,
    site_name: branding?.site_name ?? '',
    message: branding?.message ?? '',
    message_hidden: branding?.message ? '' : 'hidden',
    paused_message: branding?.paused_message ?? '',
    closed_message: branding?.closed_message ?? '',
    logo_url: branding?.logo_url ?? '',
    logo_alt: branding?.logo_alt ?? branding?.site_name ?? '',
    link_url: branding?.link_url ?? '',
    link_text: branding?.link_text ?? t.back_to_site!,
    brand_style: style,
    brand_style_hash: style === '' ? '' : `sha256-${createHash('sha256').update(style).digest('base64')}`,
    admission: room.admission ?? 'manual',
    // Which card the default page shows before its script runs (the preview and the gate show it as is).
    intro_hidden:
      input.gate !== undefined || ending || input.phase === 'before' || input.phase === 'your_turn' || (siteInLine && position !== undefined) ? 'hidden' : '',
    queue_hidden: inLine || (input.gate === undefined && siteInLine && position !== undefined) ? '' : 'hidden',
    checkout_hidden: input.phase === 'your_turn' ? '' : 'hidden',
    // "Your turn": the demo's sample store sells its widget there; any other room continues to its own site
    // (docs/pages.md "Your turn"): the link back, through the hand-off when the room allows its origin.
    sample_store: sampleStore,
    turn_title: sampleStore ? t.checkout_title! : t.turn_title!,
    continue_url: sampleStore ? '' : (branding?.link_url ?? ''),
    continue_handoff: !sampleStore && handoffAllowed(branding?.link_url, room.allowed_return_origins) ? 'true' : '',
    ending_hidden: ending ? '' : 'hidden',
    phase_notice_hidden: phaseNotice === '' ? 'hidden' : '',
    paused_message_hidden: input.phase === 'paused' && branding?.paused_message ? '' : 'hidden',
    countdown_hidden: countdown === undefined ? 'hidden' : '',
    closed_message_hidden: branding?.closed_message ? '' : 'hidden',
    // The way to the draw's check page: for a room with a draw, from the pre-queue on.
    draw_check_hidden: input.phase === 'before' ? 'hidden' : '',
    // A visitor in line whose turn did not come gets an ending; anyone else the phase's sentence.
    ending_text: input.gate === 'queued' ? t[input.phase === 'ended' ? 'ending_ended' : 'ending_closed']! : t[input.phase === 'ended' ? 'phase_ended' : 'phase_closed']!,
    // Leaving the line is the public API's: behind the gate the place is the cookie's.
    leave_hidden: input.gate !== undefined ? 'hidden' : '',
    wait_low_minutes: low === undefined ? '' : Math.floor(low / 60),
    wait_high_minutes: high === undefined ? '' : Math.ceil(high / 60),
    wait_text: waitText,
    admission_pace_per_minute: paceRounded ?? '',
    pace_text: paceRounded === undefined ? '' : fill(t.pace!, { n: number.format(paceRounded) }),
    event_start: room.event_start_time ?? '',
    event_start_text: start,
    event_end: room.event_end_time ?? '',
    event_end_text: end,
    event_times: eventTimes,
    opens_at: opensAt ?? '',
    countdown_to: countdownTo ?? '',
    countdown_seconds: countdown ?? '',
    countdown_text: countdown === undefined ? '' : fill(t[input.phase === 'before' ? 'countdown_before' : 'countdown']!, { time: clock(countdown) }),
    draw: room.shuffle_at_event_start === true,
    generation: input.generation ?? '',
    // The origins, besides its own, the page's script may call (web/shared/settings.ts), space-separated.
    api_origins: (room.allowed_api_origins ?? []).join(' '),
    // For the page's script: a JSON data block (never executed); "<" escaped so no text can close the element.
    strings_json: JSON.stringify(stringsForScript).replace(/</g, '\\u003c'),
    ...visitorVariables(input),
  };
}

/** The sentence of a phase (empty while waiting): the same words the page's script shows when the phase changes. */
export function phaseSentence(phase: PagePhase, t: Strings, times: { start: string; opens: string; draw: boolean; sampleStore?: boolean }): string {
  switch (phase) {
    case 'waiting':
    case 'closed':
    case 'ended':
      // Closed and ended: said by the ending card (#ending) instead.
      return '';
    case 'before':
      return fill(t.phase_before!, { start: times.opens });
    case 'prequeue':
      return fill(t[times.draw ? 'phase_prequeue_draw' : 'phase_prequeue']!, { start: times.start });
    case 'your_turn':
      // Any room but the sample one: said by the turn card's heading ("It's your turn") alone.
      return times.sampleStore === true ? t.phase_your_turn! : '';
    default:
      return t[`phase_${phase}`] ?? '';
  }
}

/** Whether the link back may carry a hand-off code: an https:// URL on an origin the room allows return_to to. */
function handoffAllowed(link: string | undefined, allowed: readonly string[] | undefined): boolean {
  if (link === undefined || !link.startsWith('https://') || !allowed) return false;
  try {
    const origin = new URL(link).origin;
    return allowed.some((entry) => new URL(entry).origin === origin);
  } catch {
    return false;
  }
}

/** A time for people, in UTC (the page's script shows it again in the visitor's own time zone). */
function utcTime(lang: string, iso: string | undefined): string {
  if (iso === undefined) return '';
  return new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'UTC', timeZoneName: 'short' }).format(new Date(iso));
}

/** Seconds as h:mm:ss / mm:ss (the countdown; the script formats the same way). */
function clock(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${seconds >= 3600 ? `${Math.floor(seconds / 3600)}:` : ''}${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

/**
 * The short queue ID a visitor can quote to support: the first 8 hex digits of the request ID, as "6F1C-2A3E"
 * (the operator finds the visitor by that prefix in the logs and the audit).
 */
export function queueId(requestId: string): string {
  const hex = requestId.replace(/[^0-9a-fA-F]/g, '').slice(0, 8).toUpperCase();
  return hex.length < 8 ? '' : `${hex.slice(0, 4)}-${hex.slice(4)}`;
}

/**
 * The page, rendered: the room's template, or the default one. `replace` overrides variables (the gate puts
 * markers in place of the visitor's, src/web/gate-page.ts).
 */
export function renderWaitingPage(input: PageInput, replace?: Readonly<Record<string, unknown>>): string {
  const variables = replace ? { ...pageVariables(input), ...replace } : pageVariables(input);
  if (input.room.page !== undefined) {
    try {
      return Mustache.render(input.room.page, variables);
    } catch {
      // A template that does not parse (the preview says why): visitors get the default page, never an error.
    }
  }
  return Mustache.render(input.defaultTemplate, variables);
}

/** Text as Mustache's {{variable}} escapes it. */
export function escapeHtml(text: string): string {
  return Mustache.escape(text);
}

/** A template's syntax problem, for the rooms API to refuse it at once (undefined when it parses). */
export function templateProblem(template: string): string | undefined {
  try {
    Mustache.parse(template);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** People ahead of a visitor without a count from the server: those between the serving counter and the place. */
export function peopleAhead(position: number, serving: number): number {
  return peopleStillAhead(position, serving);
}

/** A wait range for people, in the language ("4–7 minutes", "less than a minute", "about 2 hours"). */
export function formatWait(lowSec: number, highSec: number, lang: string, t: Strings): string {
  const unit = (name: 'minute' | 'hour') => new Intl.NumberFormat(lang, { style: 'unit', unit: name, unitDisplay: 'long' });
  if (highSec < 60) return fill(t.less_than!, { t: unit('minute').format(1) });
  if (highSec >= 90 * 60) {
    const low = Math.max(1, Math.floor(lowSec / 3600));
    const high = Math.max(low, Math.ceil(highSec / 3600));
    return low === high ? fill(t.about!, { t: unit('hour').format(low) }) : unit('hour').formatRange(low, high);
  }
  const low = Math.floor(lowSec / 60);
  const high = Math.max(1, Math.ceil(highSec / 60));
  if (low === 0) return fill(t.less_than!, { t: unit('minute').format(high) });
  return low >= high ? fill(t.about!, { t: unit('minute').format(high) }) : unit('minute').formatRange(low, high);
}
