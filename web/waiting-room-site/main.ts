// The waiting-room page: Reserve → place in line → served → token → on to the site (the link back, or the
// hand-off), or, in the demo's sample room (`sample_store`), a purchase at the sample store → receipt.
// While in line the visitor may leave it (POST /leave_queue, after a confirmation): the place goes to the next.
// Plain DOM and fetch, no framework: this page is what every visitor downloads during a surge.

import './style.css';
import { ACTION_BACKOFF, POLL_BACKOFF, errorMessage, fetchWithRetry, isRetryableStatus, nextDelay } from '../shared/retry.ts';
import { listedOrigins, readSettings } from '../shared/settings.ts';
import { CounterStream, messagesOf, type RoomMessages, type StreamCounters } from './counter-stream.ts';
import { PROOF_REFUSALS, solveProofOfWork } from './proof-of-work.ts';
import { TurnEstimator, formatRange } from './turn-estimate.ts';
import { t, lang } from './strings.ts';
import { TurnSignals } from './turn-signals.ts';
import { aheadToShow, cardFor, clockText, endingKey, pagePhaseOfRoom, queueIdOf, waitWords, type Card, type PagePhase } from './phase-view.ts';
import { VisitStore, type Receipt, type Visit } from './visit-store.ts';

/** VWR's sample polled every 3 s; the counters are cacheable for 1 s, so a CDN absorbs most of it. */
const POLL_MS = 3_000;
/** With the counter stream open, a poll now and then all the same, in case the stream stalls unnoticed. */
const STREAM_SAFETY_POLL_MS = 60_000;
/**
 * How often a page that polls tells the room it is still there (GET /queue_num with its request ID and beat=1:
 * presence, docs/rooms.md "Presence and the arrival window"); the stream tells it by being open (its URL names the ID).
 */
const PRESENCE_BEAT_MS = 10_000;
/** After the server refused the stream, ask for it again this much later (a node may have room again). */
const STREAM_RETRY_MS = 120_000;
/** A screen reader hears a position change at most this often (the live region would chatter otherwise). */
const ANNOUNCE_EVERY_MS = 15_000;
/** The server's count of the people still ahead is asked for again at most this often (people who left). */
const AHEAD_REFRESH_MS = 30_000;

// The APIs this page may call: its own origin and those its room lists (allowed_api_origins), never a link's pick.
const apiOrigins = listedOrigins(document.querySelector('meta[name="anteroom-api-origins"]')?.getAttribute('content'));
const settings = readSettings(location.search, location.origin, apiOrigins);
const visits = new VisitStore(settings.publicApiUrl, settings.eventId);
const eventQuery = `event_id=${encodeURIComponent(settings.eventId)}`;

function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} missing`);
  return found as T;
}

const ui = {
  intro: element('intro'),
  reserve: element<HTMLButtonElement>('reserve'),
  queue: element('queue'),
  queueTitle: element('queue-title'),
  myPosition: element('my-position'),
  serving: element('serving'),
  ahead: element('ahead'),
  eta: element('eta'),
  etaNote: element('eta-note'),
  meter: element('meter'),
  leaveRow: element('leave-row'),
  leave: element<HTMLButtonElement>('leave'),
  leaveConfirm: element('leave-confirm'),
  leaveYes: element<HTMLButtonElement>('leave-yes'),
  leaveNo: element<HTMLButtonElement>('leave-no'),
  checkout: element('checkout'),
  checkoutTitle: element('checkout-title'),
  tokenStatus: element('token-status'),
  status: element('status'),
  error: element('error'),
  restartRow: element('restart-row'),
  startOver: element<HTMLButtonElement>('start-over'),
  announcer: element('announcer'),
  detailRequest: element('detail-request'),
  notify: element<HTMLButtonElement>('notify'),
  sound: element<HTMLInputElement>('sound'),
  phaseNotice: element('phase-notice'),
  pausedMessage: element('paused-message'),
  countdown: element('countdown'),
  ending: element('ending'),
  endingTitle: element('ending-title'),
  endingText: element('ending-text'),
  queueIdRow: element('queue-id-row'),
  queueId: element('queue-id'),
};
/**
 * The sample store's checkout (the demo's room, `sample_store`): absent from every other room's page, whose turn
 * continues to its own site instead (#continue-link).
 */
const store = document.body.dataset.sampleStore === 'true' && document.getElementById('purchase')
  ? {
      purchase: element<HTMLButtonElement>('purchase'),
      receipt: element('receipt'),
      receiptResult: element('receipt-result'),
      receiptOrder: element('receipt-order'),
      receiptPosition: element('receipt-position'),
    }
  : undefined;
const continueLink = document.getElementById('continue-link') as HTMLAnchorElement | null;
/** The way to the draw's check page (a room with a draw; absent from other rooms and from templates without it). */
const drawRow = document.getElementById('draw-check-row');
const drawLink = document.getElementById('draw-check-link') as HTMLAnchorElement | null;
const body = document.body.dataset;
/** The room's phase as the page shows it: rendered by the server, then followed on the stream or the gate's answers. */
let pagePhase: PagePhase = (pagePhaseOfRoom(body.phase) ?? (body.phase === 'your_turn' ? 'waiting' : 'waiting'));
const signals = new TurnSignals(ui.notify, ui.sound, (text) => setStatus(text));

element('detail-event').textContent = settings.eventId;
element('detail-public').textContent = settings.publicApiUrl;
const detailCommerce = document.getElementById('detail-commerce');
if (detailCommerce) detailCommerce.textContent = settings.commerceApiUrl;

interface Token {
  access: string;
  expiresAtMs: number;
}

/** Everything about the current visit; replaced as a whole by "Start over". */
interface Session {
  visit: Visit;
  /** When the page last told the room it is there (ms; presence). */
  presenceBeatAt?: number;
  serving?: number;
  /** The serving counter when this page first saw it, for the progress bar. */
  servingAtStart?: number;
  token?: Token;
  estimator: TurnEstimator;
  failures: number;
  timer?: ReturnType<typeof setTimeout>;
  lastAnnounced?: { ahead: number; atMs: number };
  /** The server's estimate answered with the place (GET /queue_num), until the page measures the pace. */
  serverEstimate?: { lowSec: number; highSec: number; atMs: number };
  /** The late end of the estimate last shown, seconds (a longer one comes with its reason). */
  lastHighSec?: number;
  stopped: boolean;
  /** The pushed counters (GET /stream) once the place is known; polling takes over while it is not live. */
  stream?: CounterStream;
  /** When the stream was last refused (ms): not asked for again before STREAM_RETRY_MS. */
  streamRefusedAt?: number;
  /** People still waiting ahead, as the server last counted them (without those who left), and when (ms). */
  serverAhead?: number;
  serverAheadAt?: number;
}

let session: Session | undefined;

// ---- rendering ---------------------------------------------------------------------------------------------

/** intro: not in line; queue: waiting; checkout: served; ended: this visit cannot go on; ending: the room closed. */
function show(phase: Card | 'ended'): void {
  ui.intro.hidden = phase !== 'intro';
  ui.queue.hidden = phase !== 'queue';
  ui.checkout.hidden = phase !== 'checkout';
  ui.ending.hidden = phase !== 'ending';
  ui.restartRow.hidden = phase !== 'checkout' && phase !== 'ended';
}

// ---- the room's phase ----------------------------------------------------------------------------------------

const opensAt = Date.parse(body.opensAt ?? '');
const startsAt = Date.parse(body.eventStart ?? '');
/** A time in the visitor's own time zone. */
function localTime(ms: number): string {
  return new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);
}

/** Shows the room's phase: its sentence, the operator's message, the countdown, and the one card that goes with it. */
function applyPhase(phase: PagePhase): void {
  const changed = phase !== pagePhase;
  pagePhase = phase;
  document.body.dataset.phase = phase;
  const s = session && !session.stopped ? session : undefined;
  const inLine = s !== undefined;
  const sentence =
    phase === 'before'
      ? t('phase_before', { start: Number.isFinite(opensAt) ? localTime(opensAt) : '…' })
      : phase === 'prequeue'
        ? t(body.draw === 'true' ? (inLine ? 'prequeue_draw' : 'phase_prequeue_draw') : 'phase_prequeue', { start: Number.isFinite(startsAt) ? localTime(startsAt) : '…' })
        : phase === 'paused'
          ? t('phase_paused')
          : '';
  ui.phaseNotice.textContent = sentence;
  ui.phaseNotice.hidden = sentence === '';
  ui.pausedMessage.hidden = phase !== 'paused' || (ui.pausedMessage.textContent ?? '') === '';
  if (drawRow) drawRow.hidden = phase === 'before';
  startCountdown(phase);
  // A visitor already shown the ended visit (restarted, expired) keeps it; the checkout is kept whatever happens.
  if (!ui.restartRow.hidden && ui.checkout.hidden) return;
  const card = cardFor(phase, { inLine, served: !ui.checkout.hidden });
  if (card === 'ending') {
    ui.endingText.textContent = t(endingKey(phase as 'closed' | 'ended', inLine));
    if (changed) announce(ui.endingText.textContent);
  }
  show(card);
  if (card === 'queue' && s) renderQueue(s);
}

/**
 * The operator's messages changed (a frame of the stream, an answer of the gate): shown at once, no reload. The
 * paused message shows while paused only; the closed one in the ending. Templates without these elements skip them.
 */
function applyMessages(messages: RoomMessages): void {
  const set = (id: string, text: string | undefined, shown: boolean) => {
    const node = document.getElementById(id);
    if (!node) return;
    if (node.textContent !== (text ?? '')) node.textContent = text ?? '';
    node.hidden = !shown || !text;
  };
  set('room-message', messages.message, true);
  set('paused-message', messages.paused_message, pagePhase === 'paused');
  set('closed-message', messages.closed_message, true);
}

let countdownTimer: ReturnType<typeof setTimeout> | undefined;
/** Before the opening: a countdown to it; in the pre-queue: to the start. Once a second while shown. */
function startCountdown(phase: PagePhase): void {
  clearTimeout(countdownTimer);
  const target = phase === 'before' ? opensAt : phase === 'prequeue' ? startsAt : NaN;
  ui.countdown.hidden = !Number.isFinite(target);
  if (!Number.isFinite(target)) return;
  const key = phase === 'before' ? 'countdown_before' : 'countdown';
  const tickCountdown = () => {
    const left = Math.max(0, Math.ceil((target - Date.now()) / 1000));
    const time = clockText(left);
    ui.countdown.textContent = t(key, { time: numbers.format(0) === '0' ? time : time.replace(/\d/g, (d) => numbers.format(Number(d))) });
    if (left > 0) countdownTimer = setTimeout(tickCountdown, 1000 - (Date.now() % 1000));
    // The opening: the stream says so within a moment; a page without it asks the server again.
    else if (phase === 'before') countdownTimer = setTimeout(() => { if (pagePhase === 'before') location.reload(); }, 4_000);
  };
  tickCountdown();
}

/** A frame or an answer named the room's phase. */
function followPhase(roomPhase: string | undefined): void {
  const phase = pagePhaseOfRoom(roomPhase);
  if (phase && phase !== pagePhase) applyPhase(phase);
}

/** The room's stream while the page has no visit of its own streaming (Reserve, the countdown, the pre-queue). */
let watcher: CounterStream | undefined;
function watchRoom(): void {
  const wanted = !gateMeta && !session?.stream;
  if (!wanted) {
    watcher?.close();
    watcher = undefined;
    return;
  }
  if (watcher) return;
  watcher = new CounterStream(
    `${settings.publicApiUrl}/stream?${eventQuery}`,
    ({ phase }) => followPhase(phase),
    (gaveUp) => {
      if (gaveUp) watcher = undefined;
    },
    applyMessages,
  );
}

/**
 * The site's link to the draw's check page: this room, the public API when it is not this page's origin, and the
 * visitor's own request ID in the fragment (never sent to a server; the check page removes it at once).
 */
function updateDrawLink(): void {
  if (!drawLink || gateMeta) return;
  const url = new URL('../draw-check/', location.href);
  const query = new URLSearchParams({ event_id: settings.eventId });
  if (settings.publicApiUrl !== location.origin) query.set('api', settings.publicApiUrl);
  url.search = query.toString();
  const id = session && !session.stopped ? session.visit.requestId : '';
  url.hash = id ? `request_id=${encodeURIComponent(id)}` : '';
  drawLink.href = url.href;
}

function setStatus(text: string, tone: 'info' | 'warn' | 'ok' = 'info'): void {
  ui.status.className = `notice ${tone}`;
  ui.status.textContent = text;
}

function setError(text: string): void {
  ui.error.textContent = text;
}

function announce(text: string): void {
  ui.announcer.textContent = text;
}

const numbers = new Intl.NumberFormat(lang);
function formatNumber(n: number | undefined): string {
  return n === undefined ? '…' : numbers.format(n);
}

// `waiting` (VWR's waiting_num) also counts visitors let in who have not claimed yet: the page shows only numbers
// derived from the visitor's own position and the serving counter, so none contradicts another.
function renderQueue(s: Session, _waiting?: number): void {
  const position = s.visit.position;
  ui.myPosition.textContent = formatNumber(position);
  ui.serving.textContent = formatNumber(s.serving);
  const id = queueIdOf(s.visit.requestId);
  if (id !== '') ui.queueId.textContent = id;
  ui.queueIdRow.hidden = (ui.queueId.textContent ?? '') === '';
  // The people still waiting ahead: the server's count (without those who left), never more than the gap.
  ui.ahead.textContent = position === undefined || s.serving === undefined ? '…' : formatNumber(aheadToShow(position, s.serving, s.serverAhead));
  if (position === undefined || s.serving === undefined) {
    const words = waitWords('estimating', { phase: pagePhase, serving: s.serving, admission: body.admission ?? 'manual' });
    if (words) {
      ui.eta.textContent = t(words.eta);
      ui.etaNote.textContent = t(words.note, { start: Number.isFinite(startsAt) ? localTime(startsAt) : '…' });
    }
    return;
  }

  const start = s.servingAtStart ?? s.serving;
  const span = Math.max(1, position - start);
  ui.meter.style.width = `${Math.min(100, Math.max(2, ((s.serving - start) / span) * 100))}%`;

  const estimate = s.estimator.estimate(Date.now(), position);
  const ahead = aheadToShow(position, s.serving, s.serverAhead);
  ui.etaNote.textContent = '';
  // Paused only when the room is; otherwise what the line waits for (phase-view.ts).
  const words = waitWords(estimate.kind, { phase: pagePhase, serving: s.serving, admission: body.admission ?? 'manual' });
  if (words && estimate.kind !== 'served') {
    ui.eta.textContent = t(words.eta);
    ui.etaNote.textContent = t(words.note, { start: Number.isFinite(startsAt) ? localTime(startsAt) : '…' });
  } else if (estimate.kind === 'range') {
    ui.eta.textContent = formatRange(estimate.lowSec, estimate.highSec, lang, t);
    const perMinute = estimate.perMinute >= 10 ? Math.round(estimate.perMinute) : Math.round(estimate.perMinute * 10) / 10;
    ui.etaNote.textContent = t('pace', { n: numbers.format(perMinute) });
    // The estimate grew: say why (admissions slowed down), so it never jumps up without a reason shown.
    if (s.lastHighSec !== undefined && estimate.highSec > s.lastHighSec * 1.1) ui.etaNote.textContent += ` ${t('longer_note')}`;
    s.lastHighSec = estimate.highSec;
  } else if (s.serverEstimate) {
    // The server's estimate at the lookup, counted down since (it never grows by itself).
    const gone = (Date.now() - s.serverEstimate.atMs) / 1000;
    ui.eta.textContent = formatRange(Math.max(0, s.serverEstimate.lowSec - gone), Math.max(1, s.serverEstimate.highSec - gone), lang, t);
  } else {
    ui.eta.textContent = t('estimating');
  }
  const now = Date.now();
  const last = s.lastAnnounced;
  if (!last || (last.ahead !== ahead && now - last.atMs >= ANNOUNCE_EVERY_MS)) {
    announce(t('announce_position', { position: formatNumber(position), ahead: formatNumber(ahead) }));
    s.lastAnnounced = { ahead, atMs: now };
  }
}

function renderReceipt(receipt: Receipt): void {
  if (!store) return;
  store.receipt.hidden = false;
  store.receiptResult.textContent = receipt.result;
  store.receiptOrder.textContent = receipt.order;
  store.receiptPosition.textContent = receipt.position === undefined ? '—' : String(receipt.position);
  store.purchase.disabled = true;
  store.purchase.textContent = t('purchased');
}

// ---- the waiting loop --------------------------------------------------------------------------------------

/** A failure worth retrying later (network, 429, 5xx). */
class Transient extends Error {}
/** A final answer that ends this visit (unknown event, lost place). */
class Fatal extends Error {}

async function get(path: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${settings.publicApiUrl}${path}`);
  } catch {
    throw new Transient('network error');
  }
  if (isRetryableStatus(response.status)) throw new Transient(`HTTP ${response.status}`);
  return response;
}

async function readNumber(response: Response, field: string): Promise<number> {
  const body = (await response.json()) as Record<string, unknown>;
  // VWR sent the serving counter as a string: accept either.
  const value = Number(body[field]);
  if (!Number.isFinite(value)) throw new Transient(`bad ${field}`);
  return value;
}

async function pollCounters(s: Session): Promise<void> {
  const needPosition = s.visit.position === undefined;
  // The place is looked up again now and then for the server's count of the people still ahead (some left).
  const refreshAhead = !needPosition && Date.now() - (s.serverAheadAt ?? 0) > AHEAD_REFRESH_MS;
  // A sign of life every PRESENCE_BEAT_MS while the page polls (presence, issue 34): the same lookup.
  const beat = needPosition || Date.now() - (s.presenceBeatAt ?? 0) >= PRESENCE_BEAT_MS;
  if (beat) s.presenceBeatAt = Date.now();
  const [servingRes, waitingRes, positionRes] = await Promise.all([
    get(`/serving_num?${eventQuery}`),
    get(`/waiting_num?${eventQuery}`),
    beat || refreshAhead ? get(`/queue_num?${eventQuery}&request_id=${encodeURIComponent(s.visit.requestId)}${beat ? '&beat=1' : ''}`) : undefined,
  ]);
  for (const response of [servingRes, waitingRes]) {
    if (response.status >= 400) throw new Fatal(t('unknown_room'));
  }
  // The room knows the event but not this place: it was reset (restarted) since the visitor joined.
  if (positionRes && positionRes.status >= 400) throw new Fatal(t(positionRes.status === 410 ? 'expired' : 'restarted'));
  const serving = await readNumber(servingRes, 'serving_counter');
  const waiting = await readNumber(waitingRes, 'waiting_num');
  // The serving counter moved back under a known place: the room may have been reset (a server without the
  // counter stream sends no generation); the place is looked up again to know.
  if (!needPosition && !positionRes && s.serving !== undefined && serving < s.serving) {
    const check = await get(`/queue_num?${eventQuery}&request_id=${encodeURIComponent(s.visit.requestId)}`);
    if (check.status >= 400) throw new Fatal(t(check.status === 410 ? 'expired' : 'restarted'));
  }
  if (positionRes?.status === 200) {
    const body = (await positionRes.json()) as { queue_number?: unknown; wait_estimate_s?: unknown; people_ahead?: unknown };
    const position = Number(body.queue_number);
    if (!Number.isFinite(position)) throw new Transient('bad queue_number');
    s.visit.position = position;
    if (typeof body.people_ahead === 'number') s.serverAhead = body.people_ahead;
    s.serverAheadAt = Date.now();
    // The server's estimate (Anteroom only): shown until the page has measured the pace itself.
    const given = body.wait_estimate_s;
    if (Array.isArray(given) && given.length === 2 && given.every((n) => typeof n === 'number')) {
      s.serverEstimate = { lowSec: given[0] as number, highSec: given[1] as number, atMs: Date.now() };
    }
    visits.save(s.visit);
  }
  // 202 on /queue_num: an asynchronous intake has not stored the place yet, or (a room with a draw) the place
  // is drawn at the start.
  const awaitingDraw =
    positionRes?.status === 202 &&
    ((await positionRes.json().catch(() => ({}))) as { error?: unknown }).error === 'Waiting for the draw at the start';
  if (s.stopped) return;
  s.serving = serving;
  s.servingAtStart ??= serving;
  s.estimator.observe(Date.now(), serving);
  setStatus(
    s.visit.position !== undefined
      ? ''
      : awaitingDraw
        ? t('prequeue_draw', { start: Number.isFinite(startsAt) ? localTime(startsAt) : '…' })
        : t('looking_up'),
  );
  renderQueue(s, waiting);
}

/** Once the place is known: the counters come pushed by the server, and the page stops polling them. */
function openStream(s: Session): void {
  if (s.stream || s.stopped || s.token || s.visit.position === undefined) return;
  if (s.streamRefusedAt !== undefined && Date.now() - s.streamRefusedAt < STREAM_RETRY_MS) return;
  const onCounters = ({ serving, waiting, generation, phase }: StreamCounters) => {
      if (s.stopped) return;
      followPhase(phase);
      // The room was reset since this place was given: say so at once (the place is gone).
      if (generation !== undefined) {
        if (s.visit.generation === undefined) {
          s.visit.generation = generation;
          visits.save(s.visit);
        } else if (generation !== s.visit.generation) {
          end(s, t('restarted'));
          return;
        }
      }
      s.serving = serving;
      s.servingAtStart ??= serving;
      s.estimator.observe(Date.now(), serving);
      renderQueue(s, waiting);
      ui.queue.dataset.updates = 'stream';
      // The turn: claim now. Otherwise the frames keep the page live: the next poll is only a safety check.
      const reached = s.visit.position !== undefined && serving >= s.visit.position;
      if (!s.token) schedule(s, reached ? 0 : STREAM_SAFETY_POLL_MS);
  };
  const onDrop = (gaveUp: boolean) => {
      if (s.stopped) return;
      if (gaveUp) {
        s.stream = undefined;
        s.streamRefusedAt = Date.now();
        watchRoom();
      }
      // Until the stream is back (EventSource reconnects by itself), the page polls, with its back-off.
      ui.queue.dataset.updates = 'poll';
      if (s.failures === 0) schedule(s, 0);
  };
  // The room's watch (opened at load, for the phase) gives way to this visit's stream, which names the request
  // ID: an open stream is the visitor's sign of life (presence, issue 34). One connection per page at a time.
  watcher?.close();
  watcher = undefined;
  s.stream = new CounterStream(`${settings.publicApiUrl}/stream?${eventQuery}&request_id=${encodeURIComponent(s.visit.requestId)}`, onCounters, onDrop, applyMessages);
  watchRoom();
}

async function claimToken(s: Session): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${settings.publicApiUrl}/generate_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: settings.eventId, request_id: s.visit.requestId }),
    });
  } catch {
    throw new Transient('network error');
  }
  if (isRetryableStatus(response.status)) throw new Transient(`HTTP ${response.status}`);
  if (s.stopped) return;
  if (response.status === 200) {
    const body = (await response.json()) as { access_token: string; expires_in: number };
    s.token = { access: body.access_token, expiresAtMs: Date.now() + body.expires_in * 1000 };
    const until = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' }).format(s.token.expiresAtMs);
    ui.tokenStatus.className = 'notice ok';
    ui.tokenStatus.textContent = store ? t('claimed', { time: until }) : t('turn_ready');
    if (store) store.purchase.disabled = Boolean(s.visit.receipt);
    if (s.visit.receipt) renderReceipt(s.visit.receipt);
    if (settings.returnTo) await handOff(s, settings.returnTo);
    return;
  }
  if (response.status === 202) {
    // The serving counter moved back after we saw it reach us: wait again.
    s.serving = undefined;
    show('queue');
    return;
  }
  if (response.status === 404) throw new Fatal(t('restarted'));
  if (response.status === 410) throw new Fatal(t('expired'));
  throw new Fatal(t('claim_failed'));
}

/** return_to: a one-time code from the waiting room, then on to the site, which exchanges it (the hand-off). */
async function handOff(s: Session, returnTo: string): Promise<void> {
  const response = await fetch(`${settings.publicApiUrl}/handoff_code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ event_id: settings.eventId, request_id: s.visit.requestId, return_to: returnTo }),
  }).catch(() => undefined);
  if (s.stopped) return;
  if (response?.status === 200) {
    const { location: target } = (await response.json()) as { location: string };
    ui.tokenStatus.textContent = 'Taking you back to the site…';
    location.assign(target);
    return;
  }
  // 400: return_to is not a site this room may send visitors to (never an open redirect).
  setError(response ? `Could not send you back to the site (${await errorMessage(response)}).` : 'Could not reach the waiting room to send you back to the site.');
}

function enterCheckout(): void {
  if (!ui.checkout.hidden) return;
  show('checkout');
  setStatus('');
  ui.tokenStatus.className = 'notice info';
  ui.tokenStatus.textContent = t(store ? 'claiming' : 'turn_claiming');
  announce(t(store ? 'phase_your_turn' : 'turn_title'));
  signals.yourTurn(t(store ? 'phase_your_turn' : 'turn_title'));
  ui.checkoutTitle.focus();
}

async function tick(s: Session): Promise<void> {
  s.timer = undefined;
  if (s.stopped) return;
  try {
    const position = s.visit.position;
    if (position === undefined || s.serving === undefined || s.serving < position) {
      // With the stream live, a tick comes only now and then (STREAM_SAFETY_POLL_MS) or when the tab is shown
      // again: the frames keep the numbers up to date in between.
      await pollCounters(s);
      openStream(s);
    }
    const now = s.visit.position;
    if (!s.stopped && now !== undefined && s.serving !== undefined && s.serving >= now && !s.token) {
      enterCheckout();
      await claimToken(s);
    }
    if (s.failures > 0) announce(t('reconnected'));
    s.failures = 0;
  } catch (error) {
    if (s.stopped) return;
    if (error instanceof Fatal) {
      end(s, error.message);
      return;
    }
    s.failures++;
    const delay = nextDelay(s.failures - 1, POLL_BACKOFF);
    setStatus(t('retrying', { s: Math.ceil(delay / 1000) }), 'warn');
    schedule(s, delay);
    return;
  }
  if (s.token) s.stream?.close();
  else schedule(s, s.stream?.live ? STREAM_SAFETY_POLL_MS : POLL_MS);
}

/** This visit cannot go on: why, and Start over. */
function end(s: Session, message: string): void {
  stopSession(s);
  setStatus('');
  setError(message);
  show('ended');
}

function schedule(s: Session, delayMs: number): void {
  if (s.stopped) return;
  clearTimeout(s.timer);
  s.timer = setTimeout(() => void tick(s), delayMs);
}

/** Polls at once (tab shown again, page restored from the back/forward cache, network back). */
function pollNow(): void {
  if (gateMeta) return;
  const s = session;
  if (s && !s.stopped && !s.token && s.timer !== undefined) schedule(s, 0);
}

function stopSession(s: Session): void {
  s.stopped = true;
  clearTimeout(s.timer);
  s.stream?.close();
  s.stream = undefined;
  watchRoom();
}

function begin(visit: Visit): void {
  if (session) stopSession(session);
  const s: Session = { visit, estimator: new TurnEstimator(), failures: 0, stopped: false };
  session = s;
  ui.detailRequest.textContent = visit.requestId;
  updateDrawLink();
  setError('');
  if (store) {
    store.receipt.hidden = true;
    store.purchase.textContent = t('purchase');
    store.purchase.disabled = true;
  }
  showLeaveQuestion(false);
  renderQueue(s, undefined);
  show('queue');
  applyPhase(pagePhase);
  void tick(s);
}

// ---- actions -----------------------------------------------------------------------------------------------

async function reserve(): Promise<void> {
  ui.reserve.disabled = true;
  setError('');
  setStatus(t('joining'));
  // Every join carries an Idempotency-Key, kept until the join has a final answer: a join that failed (5xx, or
  // lost in transit) may still have taken a place, and the visitor's next press of Reserve sends the same key,
  // so it gets that place rather than a second one (docs/distributed.md, "What a 5xx means"). A join refused
  // for want of a proof of work took no place: it is sent again with one (twice at most, the second time after
  // a fresh challenge if the first solution came too late or was used).
  pendingJoinKey ??= crypto.randomUUID();
  try {
    let response = await join(undefined);
    for (let attempt = 0; attempt < 2 && response.status === 403; attempt++) {
      const refusal = await errorMessage(response);
      if (!PROOF_REFUSALS.some((text) => refusal.endsWith(text))) break;
      setStatus(t('checking_browser'));
      response = await join(await solveProofOfWork(settings.publicApiUrl, settings.eventId));
    }
    if (response.status < 500) pendingJoinKey = undefined; // a final answer: the next join is another one
    if (response.status !== 200) {
      setStatus('');
      // 403: the room is closed (sold out, maintenance) or not open yet; trying again at once will not help.
      setError(t(response.status === 403 ? 'join_refused' : response.status === 400 ? 'unknown_room' : 'join_failed'));
      return;
    }
    const { api_request_id: requestId } = (await response.json()) as { api_request_id: string };
    const visit: Visit = { requestId, joinedAt: Date.now() };
    visits.save(visit);
    setStatus('');
    begin(visit);
    ui.queueTitle.focus();
  } catch {
    setStatus('');
    setError(t('join_unreachable'));
  } finally {
    ui.reserve.disabled = false;
  }
}

/** The Idempotency-Key of the join under way (or failed with a 5xx or in transit), until it has a final answer. */
let pendingJoinKey: string | undefined;

function join(proofOfWork: string | undefined): Promise<Response> {
  return fetch(`${settings.publicApiUrl}/assign_queue_num`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `"${pendingJoinKey}"` },
    body: JSON.stringify({ event_id: settings.eventId, ...(proofOfWork ? { proof_of_work: proofOfWork } : {}) }),
  });
}

async function purchase(): Promise<void> {
  const s = session;
  if (!s?.token || !store) return;
  store.purchase.disabled = true;
  setError('');
  setStatus(t('purchasing'));
  const token = s.token.access;
  try {
    const response = await fetchWithRetry(
      () =>
        fetch(`${settings.commerceApiUrl}/checkout`, {
          method: 'POST',
          // The raw token, as VWR's sample site sends it; the store also accepts "Bearer <token>".
          headers: { authorization: token, 'content-type': 'application/json' },
          body: JSON.stringify({ item: 'widget', quantity: 1 }),
        }),
      ACTION_BACKOFF,
      { onRetry: ({ delayMs }) => setStatus(t('store_busy', { s: Math.ceil(delayMs / 1000) }), 'warn') },
    );
    if (s.stopped) return;
    setStatus('');
    if (response.status !== 200) {
      const refused = response.status === 401 || response.status === 403;
      setError(t(refused ? 'token_refused' : 'purchase_failed'));
      store.purchase.disabled = refused;
      return;
    }
    const body = (await response.json()) as { result?: unknown; request_id?: unknown; queue_position?: unknown };
    const receipt: Receipt = {
      result: String(body.result ?? 'Success'),
      order: typeof body.request_id === 'string' ? body.request_id : s.visit.requestId,
      ...(typeof body.queue_position === 'number' ? { position: body.queue_position } : s.visit.position ? { position: s.visit.position } : {}),
    };
    s.visit.receipt = receipt;
    visits.save(s.visit);
    renderReceipt(receipt);
    announce(t('purchase_done'));
  } catch {
    if (s.stopped) return;
    setStatus('');
    setError(t('store_unreachable'));
    store.purchase.disabled = false;
  }
}

// ---- leaving the line ----------------------------------------------------------------------------------------

/** The confirmation in place of the "Leave the line" button, or the button again. */
function showLeaveQuestion(ask: boolean): void {
  ui.leaveRow.hidden = ask;
  ui.leaveConfirm.hidden = !ask;
}

function askToLeave(ask: boolean): void {
  showLeaveQuestion(ask);
  (ask ? ui.leaveNo : ui.leave).focus();
}

/** Gives the place up (spec: POST /leave_queue), then forgets it; the page offers Reserve again. */
async function leaveLine(): Promise<void> {
  const s = session;
  if (!s) return;
  ui.leaveYes.disabled = true;
  setError('');
  try {
    const response = await fetch(`${settings.publicApiUrl}/leave_queue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: settings.eventId, request_id: s.visit.requestId }),
    });
    // 404/410: the place is gone already (left in another tab, reset, expired, claimed): forget it all the same.
    if (response.status !== 200 && response.status !== 404 && response.status !== 410) {
      setError(t('leave_failed'));
      return;
    }
    startOver();
    setStatus(t('left'), 'ok');
    announce(t('left'));
  } catch {
    setError(t('leave_unreachable'));
  } finally {
    ui.leaveYes.disabled = false;
  }
}

function startOver(): void {
  if (session) stopSession(session);
  signals.reset();
  session = undefined;
  visits.clear();
  setError('');
  setStatus('');
  ui.detailRequest.textContent = t('none_yet');
  ui.queueId.textContent = '';
  updateDrawLink();
  showLeaveQuestion(false);
  show('intro');
  applyPhase(pagePhase);
  if (!ui.intro.hidden) ui.reserve.focus();
}

ui.reserve.addEventListener('click', () => void reserve());
store?.purchase.addEventListener('click', () => void purchase());
// The link on to the site, through the hand-off when the room allows the link's origin (data-handoff): the site
// then gets a one-time code for the visitor's token set (docs/gate.md#3-the-hand-off-without-a-gate).
// Until the turn is confirmed (the token set claimed) the link waits: followed plainly, the site would not learn
// who was let in.
continueLink?.addEventListener('click', (event) => {
  if (continueLink.dataset.handoff !== 'true') return;
  event.preventDefault();
  const s = session;
  if (s?.token) void handOff(s, continueLink.href);
});
ui.startOver.addEventListener('click', startOver);
ui.leave.addEventListener('click', () => askToLeave(true));
ui.leaveNo.addEventListener('click', () => askToLeave(false));
ui.leaveYes.addEventListener('click', () => void leaveLine());
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') pollNow();
});
addEventListener('online', pollNow);
addEventListener('pageshow', (event) => {
  if (event.persisted) pollNow();
});
// Another tab of the same room joined or started over: follow it, so the tabs never disagree.
addEventListener('storage', (event) => {
  if (gateMeta || event.key !== visits.key) return;
  const visit = visits.load();
  if (!visit) startOver();
  else if (visit.requestId !== session?.visit.requestId) begin(visit);
});

if (settings.ignored.length > 0) {
  setError(t('ignored_params', { names: settings.ignored.join(', ') }));
}
// ---- behind the gate ----------------------------------------------------------------------------------------
// The gate (src/gate/) serves this same page at the URL the visitor asked for, with <meta name="anteroom-gate">.
// The place is the gate's (an HttpOnly cookie), so the page asks the gate, not the public API: the same URL
// with Accept: application/json answers {status: "queued" | "admitted" | "closed" | "challenge" | "limited", …}.
// A room whose bot defence asks a proof of work: the page solves a challenge from the gate (GET
// /_anteroom/challenge, on the site's own host) and asks the same URL again with the solution in the
// Anteroom-Proof-Of-Work header; the gate joins then (src/gate/gate-join.ts).

const GATE_POLL_MS = 2_000;
/** Where the gate serves a room's challenge (its public API's GET /challenge, under the gate's own path). */
const GATE_CHALLENGE_BASE = '/_anteroom';
/** Solutions sent in a row that were answered with a challenge again (one came too late or was used): give up at 2. */
let gateSolutionsRefused = 0;

async function followGate(s: Session, proofOfWork?: string): Promise<void> {
  if (s.stopped) return;
  try {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (proofOfWork !== undefined) headers['anteroom-proof-of-work'] = proofOfWork;
    const response = await fetch(location.href, { headers, cache: 'no-store', credentials: 'same-origin' });
    if (!response.headers.has('anteroom-gate')) {
      // Not the gate's answer: the visitor is in already (another tab was admitted); load the page itself.
      location.reload();
      return;
    }
    const body = (await response.json()) as {
      status?: string;
      location?: string;
      queue_number?: number | null;
      serving_counter?: number;
      waiting_num?: number;
      phase?: string;
      people_ahead?: number | null;
      queue_id?: string;
      request_id?: string;
      messages?: unknown;
    };
    const messages = messagesOf(body.messages);
    if (messages) applyMessages(messages);
    if (body.status === 'admitted' && typeof body.location === 'string') {
      setStatus(t('gate_admitted'), 'ok');
      location.replace(body.location);
      return;
    }
    if (body.status === 'closed') {
      // The room closed (or ended) while the visitor waited: the ending, with the operator's message and link.
      stopSession(s);
      ui.endingText.textContent = t(endingKey(pagePhase === 'ended' ? 'ended' : 'closed', true));
      pagePhase = 'closed';
      show('ending');
      announce(ui.endingText.textContent);
      return;
    }
    if (body.status === 'before') {
      // Before the opening: the countdown runs; the gate is asked again until the line opens (then it joins).
      followPhase('before');
      s.timer = setTimeout(() => void followGate(s), GATE_POLL_MS);
      return;
    }
    if (body.status === 'limited') {
      gateLimited(s);
      return;
    }
    if (body.status === 'challenge') {
      if (proofOfWork !== undefined && ++gateSolutionsRefused >= 2) {
        stopSession(s);
        show('ended');
        setError(t('gate_check_failed'));
        return;
      }
      void solveForGate(s);
      return;
    }
    gateSolutionsRefused = 0;
    if (typeof body.queue_number === 'number') s.visit.position = body.queue_number;
    s.serverAhead = typeof body.people_ahead === 'number' ? body.people_ahead : undefined;
    if (typeof body.queue_id === 'string') ui.queueId.textContent = body.queue_id;
    if (typeof body.request_id === 'string') showGateRequestId(body.request_id);
    if (ui.restartRow.hidden && ui.checkout.hidden) followPhase(body.phase);
    if (typeof body.serving_counter === 'number') {
      s.serving = body.serving_counter;
      s.servingAtStart ??= body.serving_counter;
      s.estimator.observe(Date.now(), body.serving_counter);
    }
    setStatus(s.visit.position === undefined ? t('looking_up') : '');
    renderQueue(s, body.waiting_num);
    s.failures = 0;
    s.timer = setTimeout(() => void followGate(s), GATE_POLL_MS);
  } catch {
    s.failures++;
    const delay = nextDelay(s.failures - 1, POLL_BACKOFF);
    setStatus(t('retrying', { s: Math.ceil(delay / 1000) }), 'warn');
    s.timer = setTimeout(() => void followGate(s), delay);
  }
}

/** Solves a challenge of the room without asking the visitor anything, then asks the gate again with it. */
async function solveForGate(s: Session): Promise<void> {
  setStatus(t('checking_browser'));
  let proof: string;
  try {
    proof = await solveProofOfWork(GATE_CHALLENGE_BASE, gateMeta?.dataset.eventId ?? '');
  } catch {
    // No challenge (the connection, a limit) or not solved in time: ask the gate again a little later.
    s.failures++;
    const delay = nextDelay(s.failures - 1, POLL_BACKOFF);
    setStatus(t('retrying', { s: Math.ceil(delay / 1000) }), 'warn');
    s.timer = setTimeout(() => void followGate(s), delay);
    return;
  }
  await followGate(s, proof);
}

/** Too many joins from the visitor's address: nothing is retried by itself (a retry would count too). */
function gateLimited(s: Session | undefined): void {
  if (s) stopSession(s);
  show('ended');
  setError(t('gate_limited'));
}

/**
 * Behind the gate the place is an HttpOnly cookie: the gate hands the visitor their own request ID on the page
 * (rendered, then from its answers) to check the draw with, and the draw link carries it in its fragment.
 */
function showGateRequestId(id: string): void {
  if (ui.detailRequest.textContent === id) return;
  ui.detailRequest.textContent = id;
  const shown = document.getElementById('draw-request-id');
  if (shown) shown.textContent = id;
  if (drawLink) drawLink.hash = `request_id=${encodeURIComponent(id)}`;
}

function startGate(reason: string): void {
  // Leaving and the connection details are the public API's; behind the gate the place is the cookie's.
  ui.leaveRow.hidden = true;
  if (reason === 'closed') {
    // Rendered by the server with the ending card (src/web/page-template.ts): nothing to follow.
    show('ending');
    return;
  }
  if (reason === 'origin-down') {
    show('ended');
    setStatus(t('origin_down'), 'warn');
    setTimeout(() => location.reload(), 5_000);
    return;
  }
  if (reason === 'limited') {
    gateLimited(undefined);
    return;
  }
  const s: Session = { visit: { requestId: '', joinedAt: Date.now() }, estimator: new TurnEstimator(), failures: 0, stopped: false };
  session = s;
  show(reason === 'before' ? 'none' : 'queue');
  ui.restartRow.hidden = true;
  applyPhase(pagePhase);
  if (reason === 'challenge') void solveForGate(s);
  else void followGate(s);
}

const gateMeta = document.querySelector<HTMLMetaElement>('meta[name="anteroom-gate"]');
// The estimate's words follow the clock too (a line that stops moving sends no frames): redrawn every few seconds.
setInterval(() => {
  if (session && !session.stopped && !ui.queue.hidden) renderQueue(session);
}, 5_000);

if (gateMeta) {
  startGate(gateMeta.content);
} else {
  const stored = visits.load();
  if (stored) begin(stored);
  else applyPhase(pagePhase);
  updateDrawLink();
  watchRoom();
}
