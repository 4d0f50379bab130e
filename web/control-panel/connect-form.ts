// The connection form: endpoints, the room to open first, credentials (an access key pair for SigV4, or the
// admin token). Non-secret settings survive a reload (per tab); credentials live in the page's memory only.

import { apiBaseUrl, readSettings } from '../shared/settings.ts';
import type { PrivateApiCredentials } from '../../src/client/private-api-client.ts';
import { element, setNotice, type Tone } from './dom.ts';

/** Non-secret settings only (endpoints, event, region, kind of credentials) survive a reload, per tab. */
const SETTINGS_KEY = 'anteroom.control-panel';

export const form = {
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
  status: element('connection-status'),
};

export function setConnectionStatus(text: string, tone: Tone): void {
  setNotice(form.status, text, tone);
}

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
  const checked = form.form.querySelector<HTMLInputElement>('input[name="authKind"]:checked');
  return checked?.value === 'token' ? 'token' : 'sigv4';
}

export function showAuthFields(): void {
  const kind = authKind();
  form.sigv4Fields.hidden = kind !== 'sigv4';
  form.tokenFields.hidden = kind !== 'token';
}

export function initConnectForm(): void {
  // URL parameters (VWR's) win over what this tab remembered, which wins over same-origin defaults.
  const fromUrl = readSettings(location.search, location.origin);
  const params = new URLSearchParams(location.search);
  const stored = loadStored();
  const pick = (name: keyof StoredSettings & keyof typeof fromUrl) =>
    params.get(name) && !fromUrl.ignored.includes(name) ? String(fromUrl[name]) : (stored[name] ?? String(fromUrl[name]));
  form.eventId.value = pick('eventId');
  form.publicApiUrl.value = pick('publicApiUrl');
  form.privateApiUrl.value = pick('privateApiUrl');
  form.regionName.value = pick('regionName');
  const kind = stored.authKind ?? 'sigv4';
  const radio = form.form.querySelector<HTMLInputElement>(`input[name="authKind"][value="${kind}"]`);
  if (radio) radio.checked = true;
  showAuthFields();
  if (fromUrl.ignored.length > 0) {
    setConnectionStatus(`Ignored invalid URL parameter(s): ${fromUrl.ignored.join(', ')}.`, 'warn');
  }
}

/** The credentials live in the connection's client only, never in browser storage. */
function readCredentials(): PrivateApiCredentials | string {
  if (authKind() === 'token') {
    const adminToken = form.adminToken.value.trim();
    return adminToken ? { adminToken } : 'Enter the admin token.';
  }
  const accessKeyId = form.accessKeyId.value.trim();
  const secretAccessKey = form.secretAccessKey.value.trim();
  const sessionToken = form.sessionToken.value.trim();
  if (!accessKeyId || !secretAccessKey) return 'Enter the access key ID and the secret access key.';
  if (!globalThis.crypto?.subtle) {
    return 'SigV4 signing needs a secure page (https, or http on localhost). Use the admin token, or open this page over https.';
  }
  return { accessKeyId, secretAccessKey, region: form.regionName.value.trim(), ...(sessionToken ? { sessionToken } : {}) };
}

export interface ConnectionSettings {
  eventId: string;
  publicApiUrl: string;
  privateApiUrl: string;
  credentials: PrivateApiCredentials;
}

/** The form's settings, checked (and the non-secret ones remembered), or what to fix. */
export function readConnection(): ConnectionSettings | string {
  const eventId = form.eventId.value.trim();
  const publicApiUrl = apiBaseUrl(form.publicApiUrl.value.trim());
  const privateApiUrl = apiBaseUrl(form.privateApiUrl.value.trim());
  const problems: string[] = [];
  if (!/^[A-Za-z0-9._~-]{1,128}$/.test(eventId)) problems.push('the event ID (letters, digits, . _ ~ -)');
  if (!publicApiUrl) problems.push('the public API URL (http or https)');
  if (!privateApiUrl) problems.push('the private API URL (http or https)');
  if (authKind() === 'sigv4' && !/^[a-z0-9-]{1,32}$/.test(form.regionName.value.trim())) problems.push('the region');
  if (problems.length > 0 || !publicApiUrl || !privateApiUrl) return `check ${problems.join(', ')}.`;
  const credentials = readCredentials();
  if (typeof credentials === 'string') return credentials;
  saveStored({ eventId, publicApiUrl, privateApiUrl, regionName: form.regionName.value.trim(), authKind: authKind() });
  return { eventId, publicApiUrl, privateApiUrl, credentials };
}

export function forgetSecrets(): void {
  form.secretAccessKey.value = '';
  form.sessionToken.value = '';
  form.adminToken.value = '';
}
