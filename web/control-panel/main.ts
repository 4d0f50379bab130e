// The control panel: connect (SigV4 access key pair, or the admin token), see every room with its phase and
// its people, open one to pause, resume or close it, edit its settings, let people in (with a warning before
// letting in more than are waiting) and watch its charts; create rooms. Against a VWR private API (no rooms
// API) it drives the one event named, with VWR's counters. A failed call is shown with its status and message.
//
// Views: connect-form.ts (connection), rooms-view.ts (the list), room-view.ts (the open room),
// settings-form.ts (create / edit), confirm.ts (the confirmation dialog), charts.ts; the wording in figures.ts.

import './style.css';
import { POLL_BACKOFF, nextDelay } from '../shared/retry.ts';
import { PrivateApiClient } from '../../src/client/private-api-client.ts';
import { AuditView } from './audit-view.ts';
import { phaseChangeText } from './phase-change.ts';
import { PanelApi, Transient, problemTexts, type DrawPublication, type Room } from './api.ts';
import { CounterHistory, LiveCharts } from './charts.ts';
import { REPORT_READY } from './report-protocol.ts';
import { confirmAction } from './confirm.ts';
import { form, forgetSecrets, initConnectForm, readConnection, setConnectionStatus, showAuthFields } from './connect-form.ts';
import { element, setNotice } from './dom.ts';
import { overAdmit, type RoomFigures } from './figures.ts';
import { renderRooms } from './rooms-view.ts';
import { buildFigures, clearRoom, renderDraw, renderLegacy, renderRoom } from './room-view.ts';
import { buildSettingsForm, clearErrors, closeSettings, openSettings, readValues, settingsBusy, settingsStatus, showProblem, showProblems } from './settings-form.ts';
import { formToBody, newRoomValues, roomToValues } from './settings-fields.ts';

const REFRESH_MS = 2_000;
/** A draw not yet done is looked at again this often (its commitment appears with the first join). */
const DRAW_REFRESH_MS = 10_000;

const ui = {
  roomsCard: element('rooms-card'),
  roomsList: element('rooms-list'),
  newRoom: element<HTMLButtonElement>('new-room'),
  incrementForm: element<HTMLFormElement>('increment-form'),
  incrementBy: element<HTMLInputElement>('increment-by'),
  incrementPresent: element<HTMLInputElement>('increment-present'),
  increment: element<HTMLButtonElement>('increment'),
  reset: element<HTMLButtonElement>('reset'),
  pause: element<HTMLButtonElement>('pause'),
  resume: element<HTMLButtonElement>('resume'),
  close: element<HTMLButtonElement>('close'),
  edit: element<HTMLButtonElement>('edit'),
  settingsForm: element<HTMLFormElement>('settings-form'),
  settingsCancel: element<HTMLButtonElement>('settings-cancel'),
  actionStatus: element('action-status'),
};

interface Session {
  panel: PanelApi;
  /** 'rooms': Anteroom's rooms API; 'vwr': a private API without it (one event, VWR's counters). */
  mode: 'unknown' | 'rooms' | 'vwr';
  selected: string;
  rooms: Room[];
  figures: Map<string, RoomFigures>;
  draw?: { key: string; atMs: number; publication: DrawPublication | undefined };
  timer?: ReturnType<typeof setTimeout>;
  failures: number;
  stopped: boolean;
  connected: boolean;
}

let session: Session | undefined;
/** The room the settings form edits; undefined while it creates one. */
let editingRoom: string | undefined;
const history = new CounterHistory();
const audit = new AuditView();
const charts = new LiveCharts({
  queue: element('queue-chart'),
  rate: element('rate-chart'),
  queueSummary: element('queue-chart-summary'),
  rateSummary: element('rate-chart-summary'),
});
/** The room whose history the charts hold; another room starts them afresh. */
let chartedRoom = '';
/** The charts' range: the last so many seconds (live), or between two times (a past event, not live). */
type ChartRange = { lastS: number } | { fromS: number; toS: number };
let chartRange: ChartRange = { lastS: 600 };
/** Bumped by every history load: an answer to an older one is dropped. */
let historyLoads = 0;
const chartUi = {
  range: element<HTMLSelectElement>('chart-range'),
  custom: element('chart-custom'),
  from: element<HTMLInputElement>('chart-from'),
  to: element<HTMLInputElement>('chart-to'),
  show: element<HTMLButtonElement>('chart-show'),
  status: element('chart-status'),
  report: element<HTMLButtonElement>('open-report'),
};

function rangeBounds(range: ChartRange, nowMs: number): { from: number; to: number } {
  const now = Math.floor(nowMs / 1000);
  return 'lastS' in range ? { from: now - range.lastS, to: now } : { from: range.fromS, to: range.toS };
}

/** The room's history for the range, from the server (Anteroom's rooms API; a VWR private API has none). */
async function loadHistory(s: Session): Promise<void> {
  const load = ++historyLoads;
  if (s.mode !== 'rooms') {
    chartUi.status.textContent = 'No history on this server: the charts show what this page sampled since it connected.';
    return;
  }
  const { from, to } = rangeBounds(chartRange, Date.now());
  chartUi.status.textContent = 'Loading the history…';
  try {
    const report = await s.panel.report(s.selected, from, to);
    if (load !== historyLoads || s.stopped) return;
    const recorded = (report?.minutes ?? []).map((m) => ({
      atMs: m.minute * 1000,
      serving: m.serving_counter,
      waiting: m.waiting,
      prequeue: m.prequeue ?? 0,
      absent: m.absent_waiting ?? 0,
    }));
    history.load(recorded);
    charts.update(history);
    chartUi.status.textContent =
      recorded.length > 0
        ? `${recorded.length} minute${recorded.length === 1 ? '' : 's'} on record for this range.`
        : 'Nothing on record for this range yet (the server samples each room once a minute).';
  } catch (error) {
    if (load === historyLoads) chartUi.status.textContent = `The history could not be loaded — ${(error as Error).message}`;
  }
}

/** A new range (or room): the charts start from the server's history for it. */
function restartCharts(): void {
  history.clear();
  history.spanMs = 'lastS' in chartRange ? chartRange.lastS * 1000 : Infinity;
  charts.update(history);
  if (session?.connected && chartedRoom !== '') void loadHistory(session);
}

function setActionStatus(text: string, tone: 'ok' | 'error' | 'info' | 'warn'): void {
  setNotice(ui.actionStatus, text, tone);
}

function setControlsEnabled(enabled: boolean): void {
  for (const button of [ui.increment, ui.reset, ui.pause, ui.resume, ui.close, ui.edit, ui.newRoom]) button.disabled = !enabled;
}

const selectedRoom = (s: Session): Room | undefined => s.rooms.find((room) => room.event_id === s.selected);

function chart(s: Session, serving: number, waiting: number, prequeue: number, absent: number, nowMs: number): void {
  const key = `${s.panel.publicApiUrl}#${s.selected}`;
  if (key !== chartedRoom) {
    history.clear();
    chartedRoom = key;
    chartUi.report.disabled = s.mode !== 'rooms';
    void loadHistory(s);
  }
  // A range that ends now is live; a past one stays as the server recorded it.
  if ('lastS' in chartRange) history.add({ atMs: nowMs, serving, waiting, prequeue, absent });
  charts.update(history);
}

// ---- polling -----------------------------------------------------------------------------------------------

async function refresh(s: Session): Promise<void> {
  s.timer = undefined;
  if (s.stopped) return;
  try {
    const now = Date.now();
    if (s.mode !== 'vwr') {
      const rooms = await s.panel.rooms();
      s.mode = rooms === undefined ? 'vwr' : 'rooms';
      s.rooms = rooms ?? [];
    }
    if (s.mode === 'rooms') await refreshRooms(s, now);
    else {
      const figures = await s.panel.legacyFigures(s.selected);
      if (s.stopped) return;
      ui.roomsCard.hidden = true;
      renderLegacy(s.selected, figures, now);
      chart(s, figures.serving, figures.waiting_num, 0, 0, now);
    }
    if (s.stopped) return;
    if (!s.connected || s.failures > 0) {
      setConnectionStatus(`Connected to ${s.panel.api.baseUrl} with the ${s.panel.api.identity}, event ${s.selected}.`, 'ok');
    }
    s.connected = true;
    s.failures = 0;
    setControlsEnabled(true);
    schedule(s, REFRESH_MS);
  } catch (error) {
    if (s.stopped) return;
    const message = (error as Error).message;
    if (error instanceof Transient) {
      s.failures++;
      const delay = nextDelay(s.failures - 1, POLL_BACKOFF);
      setConnectionStatus(`Error — ${message}. Retrying in ${Math.ceil(delay / 1000)} s.`, 'error');
      schedule(s, delay);
      return;
    }
    // Polling again would only repeat the refusal: stop until the operator fixes the settings.
    stop(s);
    setControlsEnabled(false);
    setConnectionStatus(`Error — ${message}`, 'error');
  }
}

async function refreshRooms(s: Session, now: number): Promise<void> {
  // A room deleted between the two calls answers 404: it is simply left without figures.
  const figures = await Promise.all(
    s.rooms.map(async (room) => {
      const f = await s.panel.figuresIfServed(room.event_id);
      return f && ([room.event_id, f] as const);
    }),
  );
  if (s.stopped) return;
  s.figures = new Map(figures.filter((entry) => entry !== undefined));
  if (!selectedRoom(s) && s.rooms[0]) s.selected = s.rooms[0].event_id;
  ui.roomsCard.hidden = false;
  renderRooms(ui.roomsList, s.rooms, s.figures, s.selected, openRoom);
  const room = selectedRoom(s);
  if (!room) {
    clearRoom();
    return;
  }
  const f = s.figures.get(room.event_id);
  renderRoom(room, f, now);
  if (f) chart(s, f.serving, f.in_line, f.prequeue_num ?? 0, f.presence?.absent_waiting ?? 0, now);
  await refreshDraw(s, room, f?.phase ?? room.phase, now);
}

/** The draw of the open room: fetched when the room or its phase changes, and while not done, now and then. */
async function refreshDraw(s: Session, room: Room, phase: string, now: number): Promise<void> {
  if (room.shuffle_at_event_start !== true) {
    s.draw = undefined;
    renderDraw(room.event_id, undefined, '', '');
    return;
  }
  const key = `${room.event_id}|${phase}`;
  const stale = !s.draw || s.draw.key !== key || (s.draw.publication?.seed === undefined && now - s.draw.atMs >= DRAW_REFRESH_MS);
  if (stale) s.draw = { key, atMs: now, publication: await s.panel.draw(room.event_id) };
  renderDraw(room.event_id, s.draw?.publication, s.panel.drawUrl(room.event_id), s.panel.publicApiUrl);
}

function schedule(s: Session, delayMs: number): void {
  if (s.stopped) return;
  clearTimeout(s.timer);
  s.timer = setTimeout(() => void refresh(s), delayMs);
}

function stop(s: Session): void {
  s.stopped = true;
  clearTimeout(s.timer);
}

// ---- connecting --------------------------------------------------------------------------------------------

function connect(): void {
  if (session) stop(session);
  session = undefined;
  setControlsEnabled(false);
  const settings = readConnection();
  if (typeof settings === 'string') {
    setConnectionStatus(`Error — ${settings}`, 'error');
    return;
  }
  // SigV4 as VWR's panel signed (aws4fetch), so the panel also drives a VWR deployment. No Content-Type, like
  // VWR's panel: the body goes out as text/plain, which the private API parses as JSON. No timeout of its own,
  // no retries: only idempotent reads are ever repeated, by the polling.
  const api = new PrivateApiClient({ baseUrl: settings.privateApiUrl, credentials: settings.credentials, jsonContentType: false });
  session = {
    panel: new PanelApi(api, settings.publicApiUrl),
    mode: 'unknown',
    selected: settings.eventId,
    rooms: [],
    figures: new Map(),
    failures: 0,
    stopped: false,
    connected: false,
  };
  form.disconnect.disabled = false;
  audit.connect(session.panel);
  setConnectionStatus(`Connecting to ${settings.privateApiUrl}…`, 'info');
  void refresh(session);
}

function disconnect(): void {
  if (session) stop(session);
  session = undefined;
  forgetSecrets();
  audit.connect(undefined);
  form.disconnect.disabled = true;
  setControlsEnabled(false);
  setConnectionStatus('Disconnected; the credentials were forgotten.', 'info');
}

// ---- actions -----------------------------------------------------------------------------------------------

function openRoom(eventId: string): void {
  const s = session;
  if (!s) return;
  s.selected = eventId;
  closeSettings();
  setActionStatus('', 'info');
  schedule(s, 0);
  element('room-title').scrollIntoView({ block: 'start' });
}

/** A change is sent once: a failure is reported, never retried. */
async function runAction(label: string, call: (s: Session) => Promise<{ status: number; body: unknown; message: string }>, describe: (body: unknown) => string): Promise<boolean> {
  const s = session;
  if (!s?.connected) return false;
  setControlsEnabled(false);
  setActionStatus(`${label}…`, 'info');
  try {
    const answer = await call(s);
    if (answer.status === 200) {
      setActionStatus(describe(answer.body), 'ok');
      if (!s.stopped) schedule(s, 0);
      return true;
    }
    setActionStatus(`Error — ${label} failed: ${answer.message}`, 'error');
  } catch {
    setActionStatus(`Error — ${label} failed: network error (the server may not have received it; check the figures before trying again).`, 'error');
  } finally {
    setControlsEnabled(Boolean(session?.connected && !session.stopped));
  }
  return false;
}

const STATE_CHANGES = {
  paused: {
    title: (id: string) => `Pause room ${id}?`,
    text: 'People can still join and keep their places, but nobody is let in: automatic admission, the inlets and the expiry job hold until you resume.',
    action: 'Pause room',
    done: (id: string) => `Room ${id} is paused.`,
  },
  open: {
    title: (id: string) => `Resume room ${id}?`,
    text: 'The room opens again: joins are accepted and people are let in as its admission says.',
    action: 'Resume room',
    done: (id: string) => `Room ${id} is open.`,
  },
  closed: {
    title: (id: string) => `Close room ${id}?`,
    text: 'New visitors are refused ("Waiting room is closed"); those in line keep their places, but nobody is let in until you reopen it.',
    action: 'Close room',
    done: (id: string) => `Room ${id} is closed.`,
  },
} as const;

async function changeState(state: keyof typeof STATE_CHANGES): Promise<void> {
  const s = session;
  if (!s) return;
  const id = s.selected;
  const change = STATE_CHANGES[state];
  if (!(await confirmAction({ title: change.title(id), text: change.text, action: change.action, danger: state === 'closed' }))) return;
  await runAction(change.action, (s) => s.panel.send('PATCH', `/rooms/${encodeURIComponent(id)}`, { state }), () => change.done(id));
}

async function increment(): Promise<void> {
  const value = Number(ui.incrementBy.value);
  if (!Number.isInteger(value) || value === 0) {
    setActionStatus('Error — enter a whole number other than 0 (negative numbers move the counter back).', 'error');
    ui.incrementBy.focus();
    return;
  }
  const s = session;
  if (!s?.connected) return;
  const id = s.selected;
  if (s.mode === 'rooms') {
    // Checked against the figures read now, not those of the last poll.
    let figures: RoomFigures;
    try {
      figures = await s.panel.figures(id);
    } catch (error) {
      setActionStatus(`Error — could not read the figures to check the increment: ${(error as Error).message}`, 'error');
      return;
    }
    const warning = overAdmit(figures, value);
    if (warning) {
      const go = await confirmAction({
        title: 'Let in more than are waiting?',
        text: warning.text,
        action: `Let in ${value.toLocaleString('en')} anyway`,
        danger: true,
      });
      if (!go) {
        setActionStatus(`Nothing changed: the serving counter stays at ${figures.serving.toLocaleString('en')}.`, 'info');
        return;
      }
    }
  }
  await runAction('Increment', (s) => s.panel.send('POST', '/increment_serving_counter', {
    event_id: id,
    increment_by: value,
    // Only when asked: a VWR private API refuses no field, but says nothing of presence.
    ...(ui.incrementPresent.checked ? { present_only: true } : {}),
  }), (body) =>
    `Serving counter is now ${(body as { serving_num: number }).serving_num}.`,
  );
}

async function reset(): Promise<void> {
  const s = session;
  if (!s?.connected) return;
  const id = s.selected;
  const go = await confirmAction({
    title: 'Reset this waiting room?',
    text: `Every position, token and counter of event ${id} is deleted. Visitors in line lose their place. This cannot be undone.`,
    action: 'Reset event',
    danger: true,
  });
  if (!go) return;
  await runAction('Reset', (s) => s.panel.send('POST', '/reset_initial_state', { event_id: id }), () => {
    history.clear();
    return `Event ${id} was reset.`;
  });
}

function editRoom(): void {
  const room = session && selectedRoom(session);
  if (!room) return;
  editingRoom = room.event_id;
  openSettings(roomToValues(room), room.event_id);
  showPhaseWarning();
}

function newRoom(): void {
  editingRoom = undefined;
  openSettings(newRoomValues(), undefined);
  showPhaseWarning();
}

async function saveSettings(): Promise<void> {
  const s = session;
  if (!s?.connected) return;
  clearErrors();
  const values = readValues();
  const body = formToBody(values);
  const id = String(values.event_id).trim();
  const editing = editingRoom;
  if (editing === undefined && s.rooms.some((room) => room.event_id === id)) {
    showProblem(`event_id: a room named ${id} exists already (open it to edit it)`);
    return;
  }
  if (id === '') {
    showProblem('event_id: is required');
    return;
  }
  settingsBusy(true);
  settingsStatus('Saving…', 'info');
  try {
    const answer = await s.panel.send('PUT', `/rooms/${encodeURIComponent(id)}`, body);
    if (answer.status === 200 || answer.status === 201) {
      closeSettings();
      s.selected = id;
      setActionStatus(answer.status === 201 ? `Room ${id} was created.` : `The settings of room ${id} were saved.`, 'ok');
      schedule(s, 0);
      element('room-title').focus();
    } else if (answer.status === 400) {
      showProblems(problemTexts(answer));
    } else {
      settingsStatus(`Not saved — ${answer.message}`, 'error');
    }
  } catch {
    settingsStatus('Not saved — network error (the server may not have received it; check the room before trying again).', 'error');
  } finally {
    settingsBusy(false);
  }
}

// ---- wiring ------------------------------------------------------------------------------------------------

form.form.addEventListener('submit', (event) => {
  event.preventDefault();
  connect();
});
form.form.addEventListener('change', (event) => {
  if ((event.target as HTMLInputElement).name === 'authKind') showAuthFields();
});
form.disconnect.addEventListener('click', disconnect);
ui.incrementForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void increment();
});
ui.reset.addEventListener('click', () => void reset());
ui.pause.addEventListener('click', () => void changeState('paused'));
ui.resume.addEventListener('click', () => void changeState('open'));
ui.close.addEventListener('click', () => void changeState('closed'));
ui.edit.addEventListener('click', editRoom);
ui.newRoom.addEventListener('click', newRoom);
/** The warning under the form while the change would move the room to another phase now (phase-change.ts). */
function showPhaseWarning(): void {
  const room = session && editingRoom !== undefined ? selectedRoom(session) : undefined;
  const current = room && (session?.figures.get(room.event_id)?.phase ?? room.phase);
  const pending = room?.shuffle_at_event_start === true && (current === 'before' || current === 'prequeue');
  element('settings-phase-warning').textContent = phaseChangeText(current, formToBody(readValues()), Date.now(), pending);
}
ui.settingsForm.addEventListener('input', showPhaseWarning);
ui.settingsForm.addEventListener('change', showPhaseWarning);

ui.settingsForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void saveSettings();
});
ui.settingsCancel.addEventListener('click', closeSettings);
/** datetime-local's value (local time) as epoch seconds; NaN when empty. */
const localSeconds = (value: string) => Math.floor(new Date(value).getTime() / 1000);
const localValue = (seconds: number) => {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};
chartUi.range.addEventListener('change', () => {
  const custom = chartUi.range.value === 'custom';
  chartUi.custom.hidden = !custom;
  if (custom) {
    // Start from the range shown so far.
    const { from, to } = rangeBounds(chartRange, Date.now());
    chartUi.from.value ||= localValue(from);
    chartUi.to.value ||= localValue(to);
    return;
  }
  chartRange = { lastS: Number(chartUi.range.value) };
  restartCharts();
});
// The after-event report (report.html, report.ts): a page of its own, for the room and the range of the charts.
// It asks when it is ready; the panel reads the report with its credentials and sends the answer, never them.
let reportWindow: { window: Window; eventId: string; from: number; to: number } | undefined;
chartUi.report.addEventListener('click', () => {
  const s = session;
  if (!s?.connected) return;
  const opened = window.open(new URL('report.html', location.href).href, '_blank');
  if (!opened) {
    chartUi.status.textContent = 'The report page was blocked: allow pop-ups for this page.';
    return;
  }
  reportWindow = { window: opened, eventId: s.selected, ...rangeBounds(chartRange, Date.now()) };
});
window.addEventListener('message', (event: MessageEvent) => {
  const target = reportWindow;
  const s = session;
  if (!target || event.source !== target.window || event.origin !== location.origin) return;
  if ((event.data as { type?: string } | null)?.type !== REPORT_READY) return;
  const send = (message: unknown) => target.window.postMessage(message, location.origin);
  if (!s?.connected) {
    send({ type: 'anteroom-report-error', error: 'the control panel is not connected' });
    return;
  }
  s.panel.report(target.eventId, target.from, target.to).then(
    (report) => send(report ? { type: 'anteroom-report', report } : { type: 'anteroom-report-error', error: `room ${target.eventId} has no report (404)` }),
    (error: unknown) => send({ type: 'anteroom-report-error', error: (error as Error).message }),
  );
});
chartUi.show.addEventListener('click', () => {
  const fromS = localSeconds(chartUi.from.value);
  const toS = localSeconds(chartUi.to.value);
  if (!Number.isFinite(fromS) || !Number.isFinite(toS) || fromS >= toS) {
    chartUi.status.textContent = 'Pick a start before the end.';
    return;
  }
  chartRange = { fromS, toS };
  restartCharts();
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && session && !session.stopped) schedule(session, 0);
});

buildFigures();
buildSettingsForm();
initConnectForm();
setControlsEnabled(false);
charts.update(history);
