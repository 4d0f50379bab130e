// The draw-check page: reads the room (?event_id=), where its draw is published (?api=<public API URL>, or
// ?draw=<address of the publication> — the gate's /_anteroom/draw-data), and the visitor's request ID (the
// address's #request_id=…, which GET /_anteroom/draw puts there from the visitor's own cookie; else the
// waiting-room page's visit kept in this browser; else typed). The fragment is never sent to a server and is
// removed from the address bar at once. Before the draw it shows the commitment and keeps it in this browser;
// after, it checks the publication (verify.ts) against the commitment kept or typed.

import './style.css';
import { checkDraw, fetchPublication, type DrawCheck, type Publication } from './verify.ts';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const form = $<HTMLFormElement>('check-form');
const eventInput = $<HTMLInputElement>('event-id');
const requestInput = $<HTMLInputElement>('request-id');
const seenInput = $<HTMLInputElement>('seen-commitment');
const button = $<HTMLButtonElement>('check');
const status = $('status');
const result = $('result');

const params = new URLSearchParams(location.search);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

/** The request ID the waiting-room page keeps for this room in this browser (web/waiting-room-site/visit-store.ts). */
function keptRequestId(eventId: string): string | undefined {
  const store = storage();
  if (!store) return undefined;
  for (let i = 0; i < store.length; i++) {
    const key = store.key(i);
    if (!key?.startsWith('anteroom.visit:') || !key.endsWith(`#${eventId}`)) continue;
    try {
      const id = (JSON.parse(store.getItem(key) ?? '{}') as { requestId?: unknown }).requestId;
      if (typeof id === 'string' && UUID.test(id)) return id;
    } catch {
      // Not a visit this page can read.
    }
  }
  return undefined;
}

/**
 * Where the draw is published, from the address: ?draw= only as a path of this site (the gate's
 * /_anteroom/draw-data; never another host, "//host" or "/\\host" included), ?api= only as an http(s) URL. A link
 * is anyone's to write: what is ignored is said, and the result names the host the publication came from.
 */
function drawSource(): { base: URL; ignored: string[] } {
  const ignored: string[] = [];
  const explicit = params.get('draw');
  if (explicit !== null) {
    const url = URL.canParse(explicit, location.origin) ? new URL(explicit, location.origin) : undefined;
    if (url && explicit.startsWith('/') && url.origin === location.origin) return { base: url, ignored };
    ignored.push('draw');
  }
  const api = params.get('api');
  if (api !== null) {
    const url = URL.canParse(api) ? new URL(api) : undefined;
    if (url && (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '') {
      url.pathname = `${url.pathname.replace(/\/+$/, '')}/draw`;
      url.search = '';
      url.hash = '';
      return { base: url, ignored };
    }
    ignored.push('api');
  }
  return { base: new URL('/draw', location.origin), ignored };
}
const source = drawSource();

function drawUrl(eventId: string): string {
  const url = new URL(source.base.href);
  url.searchParams.set('event_id', eventId);
  return url.href;
}
/** The publication's host, said in the result; a warning when it is not this site. */
const foreignSource = source.base.origin !== location.origin;

const commitmentKey = (url: string) => `anteroom.draw-commitment:${url}`;

async function getJson(url: string): Promise<Publication> {
  // Revalidated, never the browser's copy: GET /draw may be cached for a second, and a check pressed again (or
  // the page reloaded) just after the draw must not show the publication from before it.
  const response = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-cache' });
  const body = (await response.json().catch(() => ({}))) as Publication & { error?: unknown };
  if (!response.ok) throw new Error(typeof body.error === 'string' ? body.error : `the server answered ${response.status}`);
  return body;
}

const localTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' });
const when = (iso: string) => `${localTime.format(new Date(iso))} (${iso} UTC)`;

function show(check: DrawCheck, kept: string | undefined): void {
  result.hidden = false;
  const set = (id: string, text: string) => ($(id).textContent = text);
  if (check.kind === 'failed') {
    status.className = 'notice error';
    status.setAttribute('role', 'alert');
    status.textContent = `The draw does not check out. ${check.problem}`;
    result.hidden = true;
    return;
  }
  set('result-commitment', check.commitment);
  set('result-source', source.base.host);
  if (check.kind === 'pending') {
    status.className = 'notice info';
    status.textContent = 'The draw has not taken place yet.';
    set('result-place', 'The draw has not taken place yet.');
    set(
      'result-text',
      'This is the commitment the order will be drawn from. This browser keeps it and checks it after the draw; you may note it too.',
    );
    set('result-committed', check.committedAt ? when(check.committedAt) : '–');
    set('result-drawn', 'not yet');
    set('result-entries', '–');
    return;
  }
  status.className = 'notice ok';
  status.textContent = 'The draw checks out.';
  const place =
    check.place !== null
      ? `Your place is ${check.place.toLocaleString()} (position ${check.position?.toLocaleString() ?? ''}).`
      : check.notInDraw
        ? 'Your request ID is not among the draw\u2019s entries: you joined after the draw started, or left the pre-queue.'
        : 'Enter your request ID to find your place.';
  set('result-place', place);
  set(
    'result-text',
    `The order is the one committed to at ${when(check.committedAt)}, before the draw at ${when(check.drawnAt)}.` +
      (kept ? ' It is the commitment this browser saw before the draw.' : ''),
  );
  set('result-committed', when(check.committedAt));
  set('result-drawn', when(check.drawnAt));
  set('result-entries', check.entries.toLocaleString());
  if (foreignSource) {
    status.className = 'notice warn';
    status.textContent = `The draw checks out, as published by ${source.base.host}, not by this site: check that it is the waiting room's.`;
  }
  $('result-title').focus();
}

async function run(): Promise<void> {
  const eventId = eventInput.value.trim();
  if (!eventInput.checkValidity()) {
    eventInput.reportValidity();
    return;
  }
  const url = drawUrl(eventId);
  const store = storage();
  const kept = store?.getItem(commitmentKey(url)) ?? undefined;
  button.disabled = true;
  status.className = 'notice info';
  status.setAttribute('role', 'status');
  status.textContent = 'Fetching the draw…';
  try {
    const { publication, entries } = await fetchPublication(url, getJson);
    status.textContent = `Recomputing the order of ${entries.length.toLocaleString()} entries…`;
    const check = await checkDraw(publication, entries, {
      requestId: requestInput.value.trim() || undefined,
      seenCommitment: seenInput.value.trim() || kept,
      progress: (done, total) => (status.textContent = `Recomputing the order: ${Math.floor((done / total) * 100)} %…`),
    });
    if (check.kind === 'pending') store?.setItem(commitmentKey(url), check.commitment);
    show(check, check.kind === 'verified' && kept === check.commitment ? kept : undefined);
  } catch (error) {
    status.className = 'notice error';
    status.setAttribute('role', 'alert');
    status.textContent = `The draw could not be fetched: ${(error as Error).message}.`;
    result.hidden = true;
  } finally {
    button.disabled = false;
  }
}

// The request ID from the address's fragment, then forgotten by the address bar (and the browser's history).
const fragment = new URLSearchParams(location.hash.slice(1));
const fromFragment = fragment.get('request_id') ?? undefined;
if (location.hash) history.replaceState(null, '', `${location.pathname}${location.search}`);
eventInput.value = params.get('event_id') ?? '';
const requestId = fromFragment ?? (eventInput.value ? keptRequestId(eventInput.value) : undefined);
if (requestId && UUID.test(requestId)) requestInput.value = requestId;

if (source.ignored.length > 0) {
  const notice = $('address-notice');
  notice.textContent = `Ignored in the address (not a place this page fetches from): ${source.ignored.join(', ')}.`;
  notice.hidden = false;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void run();
});
if (eventInput.value) void run();
