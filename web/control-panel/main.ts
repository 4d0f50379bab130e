// The control panel: connect with an access key pair (SigV4) or the admin token, watch the counters and
// charts, let visitors in, reset the event. A failed call is shown as an error with its status and message —
// VWR's panel said "connected" whatever a 4xx said.

import './style.css';
import { POLL_BACKOFF, errorMessage, isRetryableStatus, nextDelay } from '../shared/retry.ts';
import { apiBaseUrl, readSettings } from '../shared/settings.ts';
import { CounterHistory, LiveCharts } from './charts.ts';
import { PrivateApiClient, type PrivateApiCredentials } from '../../src/client/private-api-client.ts';

const REFRESH_MS = 2_000;
/** Non-secret settings only (endpoints, event, region, kind of credentials) survive a reload, per tab. */
const SETTINGS_KEY = 'anteroom.control-panel';

function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} missing`);
  return found as T;
}

const ui = {
  form: element<HTMLFormElement>('connect-form'),
  eventId: element<HTMLInputElement>('event-id'),
  regionName: element<HTMLInputElement>('region-name'),
  publicApiUrl: element<HTMLInputElement>('public-api-url'),
  privateApiUrl: element<HTMLInputElement>('private-api-url'),
  sigv4Fields: element('sigv4-fields'),
  tokenFields: element('token-fields'),
  accessKeyId: element<HTMLInputElement>('access-key-id'),
  secretAccessKey: element<HTMLInputElement>('secret-access-key'),
  sessionToken: element<HTMLInputElement>('session-token'),
  adminToken: element<HTMLInputElement>('admin-token'),
  connect: element<HTMLButtonElement>('connect'),
  disconnect: element<HTMLButtonElement>('disconnect'),
  connectionStatus: element('connection-status'),
  serving: element('c-serving'),
  waiting: element('c-waiting'),
  active: element('c-active'),
  expired: element('c-expired'),
  available: element('c-available'),
  updated: element('updated'),
  incrementForm: element<HTMLFormElement>('increment-form'),
  incrementBy: element<HTMLInputElement>('increment-by'),
  increment: element<HTMLButtonElement>('increment'),
  reset: element<HTMLButtonElement>('reset'),
  resetDialog: element<HTMLDialogElement>('reset-dialog'),
  resetEvent: element('reset-event'),
  actionStatus: element('action-status'),
};

interface Connection {
  api: PrivateApiClient;
  eventId: string;
  publicApiUrl: string;
  timer?: ReturnType<typeof setTimeout>;
  failures: number;
  stopped: boolean;
  connected: boolean;
}

let connection: Connection | undefined;
const history = new CounterHistory();
const charts = new LiveCharts({
  queue: element('queue-chart'),
  rate: element('rate-chart'),
  queueSummary: element('queue-chart-summary'),
  rateSummary: element('rate-chart-summary'),
});
/** The room whose history the charts hold; another room starts them afresh. */
let chartedRoom = '';

// ---- settings ----------------------------------------------------------------------------------------------

interface StoredSettings {
  eventId?: string;
  publicApiUrl?: string;
  privateApiUrl?: string;
  regionName?: string;
  authKind?: 'sigv4' | 'token';
}

function loadStored(): StoredSettings {
  try {
    return JSON.parse(sessionStorage.getItem(SETTINGS_KEY) ?? '{}') as StoredSettings;
  } catch {
    return {};
  }
}

function saveStored(value: StoredSettings): void {
  try {
    sessionStorage.setItem(SETTINGS_KEY, JSON.stringify(value));
  } catch {
    // Storage refused: the settings simply are not remembered.
  }
}

function authKind(): 'sigv4' | 'token' {
  const checked = ui.form.querySelector<HTMLInputElement>('input[name="authKind"]:checked');
  return checked?.value === 'token' ? 'token' : 'sigv4';
}

function showAuthFields(): void {
  const kind = authKind();
  ui.sigv4Fields.hidden = kind !== 'sigv4';
  ui.tokenFields.hidden = kind !== 'token';
}

function initForm(): void {
  // URL parameters (VWR's) win over what this tab remembered, which wins over same-origin defaults.
  const fromUrl = readSettings(location.search, location.origin);
  const params = new URLSearchParams(location.search);
  const stored = loadStored();
  const pick = (name: keyof StoredSettings & keyof typeof fromUrl) =>
    params.get(name) && !fromUrl.ignored.includes(name) ? String(fromUrl[name]) : (stored[name] ?? String(fromUrl[name]));
  ui.eventId.value = pick('eventId');
  ui.publicApiUrl.value = pick('publicApiUrl');
  ui.privateApiUrl.value = pick('privateApiUrl');
  ui.regionName.value = pick('regionName');
  const kind = stored.authKind ?? 'sigv4';
  const radio = ui.form.querySelector<HTMLInputElement>(`input[name="authKind"][value="${kind}"]`);
  if (radio) radio.checked = true;
  showAuthFields();
  if (fromUrl.ignored.length > 0) {
    setConnectionStatus(`Ignored invalid URL parameter(s): ${fromUrl.ignored.join(', ')}.`, 'warn');
  }
}

// ---- rendering ---------------------------------------------------------------------------------------------

function setConnectionStatus(text: string, tone: 'info' | 'ok' | 'warn' | 'error'): void {
  ui.connectionStatus.className = `notice ${tone}`;
  // An error interrupts (alert); progress and success are announced politely (status).
  ui.connectionStatus.setAttribute('role', tone === 'error' ? 'alert' : 'status');
  ui.connectionStatus.textContent = text;
}

function setActionStatus(text: string, tone: 'ok' | 'error' | 'info'): void {
  ui.actionStatus.className = `notice ${tone}`;
  ui.actionStatus.setAttribute('role', tone === 'error' ? 'alert' : 'status');
  ui.actionStatus.textContent = text;
}

function setControlsEnabled(enabled: boolean): void {
  ui.increment.disabled = !enabled;
  ui.reset.disabled = !enabled;
}

function showCounters(counters: { serving: number; waiting: number; active: number; expired: number } | undefined): void {
  const text = (n: number | undefined) => (n === undefined ? '–' : n.toLocaleString());
  ui.serving.textContent = text(counters?.serving);
  ui.waiting.textContent = text(counters?.waiting);
  ui.active.textContent = text(counters?.active);
  ui.expired.textContent = text(counters?.expired);
  ui.available.textContent = text(counters && counters.serving - (counters.waiting + counters.active + counters.expired));
}

// ---- polling -----------------------------------------------------------------------------------------------

/** A failure a later poll may not see (network, 429, 5xx). */
class Transient extends Error {}
/** An answer that polling again will not change (refused credentials, unknown event). */
class Refused extends Error {}

async function checked(what: string, call: () => Promise<Response>): Promise<unknown> {
  let response: Response;
  try {
    response = await call();
  } catch {
    throw new Transient(`${what}: network error (server unreachable, or CORS refused)`);
  }
  if (response.status === 200) return response.json();
  const message = `${what}: ${await errorMessage(response)}`;
  if (isRetryableStatus(response.status)) throw new Transient(message);
  if (response.status === 401 || response.status === 403) {
    throw new Refused(`${message} — the private API refused these credentials.`);
  }
  throw new Refused(message);
}

async function refresh(c: Connection): Promise<void> {
  c.timer = undefined;
  if (c.stopped) return;
  const q = `event_id=${encodeURIComponent(c.eventId)}`;
  const publicGet = (path: string) => () => fetch(`${c.publicApiUrl}${path}`, { cache: 'no-store' });
  try {
    const [serving, waiting, active, expired] = await Promise.all([
      checked('serving_num', publicGet(`/serving_num?${q}`)),
      checked('waiting_num', publicGet(`/waiting_num?${q}`)),
      checked('num_active_tokens', () => c.api.send('GET', `/num_active_tokens?${q}`)),
      checked('expired_tokens', () => c.api.send('GET', `/expired_tokens?${q}`)),
    ]);
    if (c.stopped) return;
    const counters = {
      serving: Number((serving as { serving_counter: unknown }).serving_counter),
      waiting: Number((waiting as { waiting_num: unknown }).waiting_num),
      active: Number((active as { active_tokens: unknown }).active_tokens),
      expired: Array.isArray(expired) ? expired.length : Number.NaN,
    };
    if (Object.values(counters).some((n) => !Number.isFinite(n))) throw new Refused('Unexpected answer from the API.');
    showCounters(counters);
    const now = Date.now();
    history.add({ atMs: now, serving: counters.serving, waiting: counters.waiting });
    charts.update(history);
    ui.updated.textContent = `Updated ${new Date(now).toLocaleTimeString()}.`;
    if (!c.connected || c.failures > 0) {
      setConnectionStatus(`Connected to ${c.api.baseUrl} with the ${c.api.identity}, event ${c.eventId}.`, 'ok');
    }
    c.connected = true;
    c.failures = 0;
    setControlsEnabled(true);
    schedule(c, REFRESH_MS);
  } catch (error) {
    if (c.stopped) return;
    const message = (error as Error).message;
    if (error instanceof Transient) {
      c.failures++;
      const delay = nextDelay(c.failures - 1, POLL_BACKOFF);
      setConnectionStatus(`Error — ${message}. Retrying in ${Math.ceil(delay / 1000)} s.`, 'error');
      schedule(c, delay);
      return;
    }
    // Polling again would only repeat the refusal: stop until the operator fixes the settings.
    stop(c);
    setControlsEnabled(false);
    setConnectionStatus(`Error — ${message}`, 'error');
  }
}

function schedule(c: Connection, delayMs: number): void {
  if (c.stopped) return;
  clearTimeout(c.timer);
  c.timer = setTimeout(() => void refresh(c), delayMs);
}

function stop(c: Connection): void {
  c.stopped = true;
  clearTimeout(c.timer);
}

// ---- actions -----------------------------------------------------------------------------------------------

/** The credentials live in the connection's client only, never in browser storage. */
function readCredentials(): PrivateApiCredentials | string {
  if (authKind() === 'token') {
    const adminToken = ui.adminToken.value.trim();
    return adminToken ? { adminToken } : 'Enter the admin token.';
  }
  const accessKeyId = ui.accessKeyId.value.trim();
  const secretAccessKey = ui.secretAccessKey.value.trim();
  const sessionToken = ui.sessionToken.value.trim();
  if (!accessKeyId || !secretAccessKey) return 'Enter the access key ID and the secret access key.';
  if (!globalThis.crypto?.subtle) {
    return 'SigV4 signing needs a secure page (https, or http on localhost). Use the admin token, or open this page over https.';
  }
  return { accessKeyId, secretAccessKey, region: ui.regionName.value.trim(), ...(sessionToken ? { sessionToken } : {}) };
}

function connect(): void {
  if (connection) stop(connection);
  connection = undefined;
  setControlsEnabled(false);
  const eventId = ui.eventId.value.trim();
  const publicApiUrl = apiBaseUrl(ui.publicApiUrl.value.trim());
  const privateApiUrl = apiBaseUrl(ui.privateApiUrl.value.trim());
  const problems: string[] = [];
  if (!/^[A-Za-z0-9._~-]{1,128}$/.test(eventId)) problems.push('the event ID (letters, digits, . _ ~ -)');
  if (!publicApiUrl) problems.push('the public API URL (http or https)');
  if (!privateApiUrl) problems.push('the private API URL (http or https)');
  if (authKind() === 'sigv4' && !/^[a-z0-9-]{1,32}$/.test(ui.regionName.value.trim())) problems.push('the region');
  if (problems.length > 0 || !publicApiUrl || !privateApiUrl) {
    setConnectionStatus(`Error — check ${problems.join(', ')}.`, 'error');
    return;
  }
  const credentials = readCredentials();
  if (typeof credentials === 'string') {
    setConnectionStatus(`Error — ${credentials}`, 'error');
    return;
  }
  // SigV4 as VWR's panel signed (aws4fetch), so the panel also drives a VWR deployment. No Content-Type, like
  // VWR's panel: the body goes out as text/plain, which the private API parses as JSON. No timeout of its own,
  // no retries: only idempotent reads are ever repeated, by the polling.
  const api = new PrivateApiClient({ baseUrl: privateApiUrl, credentials, jsonContentType: false });
  saveStored({ eventId, publicApiUrl, privateApiUrl, regionName: ui.regionName.value.trim(), authKind: authKind() });
  const historyKey = `${publicApiUrl}#${eventId}`;
  if (historyKey !== chartedRoom) history.clear();
  chartedRoom = historyKey;
  ui.resetEvent.textContent = eventId;
  connection = { api, eventId, publicApiUrl, failures: 0, stopped: false, connected: false };
  ui.disconnect.disabled = false;
  setConnectionStatus(`Connecting to ${privateApiUrl}…`, 'info');
  void refresh(connection);
}

function disconnect(): void {
  if (connection) stop(connection);
  connection = undefined;
  ui.secretAccessKey.value = '';
  ui.sessionToken.value = '';
  ui.adminToken.value = '';
  ui.disconnect.disabled = true;
  setControlsEnabled(false);
  setConnectionStatus('Disconnected; the credentials were forgotten.', 'info');
}

/** Increments and resets are sent once: they are not idempotent, so a failure is reported, never retried. */
async function runAction(label: string, path: string, body: unknown, describe: (answer: unknown) => string): Promise<void> {
  const c = connection;
  if (!c?.connected) return;
  setControlsEnabled(false);
  setActionStatus(`${label}…`, 'info');
  try {
    const response = await c.api.send('POST', path, body);
    if (response.status === 200) {
      setActionStatus(describe(await response.json()), 'ok');
      if (!c.stopped) schedule(c, 0);
    } else {
      setActionStatus(`Error — ${label} failed: ${await errorMessage(response)}`, 'error');
    }
  } catch {
    setActionStatus(`Error — ${label} failed: network error (the server may not have received it; check the counters before trying again).`, 'error');
  } finally {
    setControlsEnabled(Boolean(connection?.connected && !connection.stopped));
  }
}

function increment(): void {
  const value = Number(ui.incrementBy.value);
  if (!Number.isInteger(value) || value === 0) {
    setActionStatus('Error — enter a whole number other than 0 (negative numbers move the counter back).', 'error');
    ui.incrementBy.focus();
    return;
  }
  const c = connection;
  if (!c) return;
  void runAction('Increment', '/increment_serving_counter', { event_id: c.eventId, increment_by: value }, (answer) =>
    `Serving counter is now ${(answer as { serving_num: number }).serving_num}.`,
  );
}

function confirmReset(): void {
  if (!connection?.connected) return;
  ui.resetDialog.returnValue = '';
  ui.resetDialog.showModal();
}

ui.resetDialog.addEventListener('close', () => {
  const c = connection;
  if (ui.resetDialog.returnValue !== 'reset' || !c) return;
  void runAction('Reset', '/reset_initial_state', { event_id: c.eventId }, () => {
    history.clear();
    return `Event ${c.eventId} was reset.`;
  }).then(() => ui.reset.focus());
});

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  connect();
});
ui.form.addEventListener('change', (event) => {
  if ((event.target as HTMLInputElement).name === 'authKind') showAuthFields();
});
ui.disconnect.addEventListener('click', disconnect);
ui.incrementForm.addEventListener('submit', (event) => {
  event.preventDefault();
  increment();
});
ui.reset.addEventListener('click', confirmReset);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && connection && !connection.stopped) schedule(connection, 0);
});

initForm();
charts.update(history);
