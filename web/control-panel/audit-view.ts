// The audit log (GET /private/audit, newest first, docs/operations.md "Audit log"): who changed what, when,
// from where, with the values before and after — of one room or of all. The server filters by room
// (?event_id=), so a page of 100 is 100 of that room's changes; "Load older" goes further back.

import type { PanelApi } from './api.ts';
import { element, h, setNotice } from './dom.ts';

export interface AuditEntry {
  seq: number;
  at: number;
  caller: string;
  address: string;
  action: string;
  event_id: string | null;
  request: unknown;
  before: unknown;
  after: unknown;
}

/** The fields whose value differs between before and after ("state: open → paused"), for a settings change. */
export function changes(before: unknown, after: unknown): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (before === null && isObject(after)) return ['created'];
  if (isObject(before) && after === null) return ['deleted'];
  if (!isObject(before) || !isObject(after)) return [];
  const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k])).map((k) => `${k}: ${show(before[k])} → ${show(after[k])}`);
}

/** An event ID, as the server checks it (src/domain/room-settings-model.ts EVENT_ID_PATTERN). */
const EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;
export const AUDIT_PAGE = 100;

/**
 * The query of one page of the audit log: of `room` ('' = every room), older than `before` when given; undefined
 * when `room` is not an event ID (the server would refuse it).
 */
export function auditQuery(room: string, before: number | undefined): string | undefined {
  if (room !== '' && !EVENT_ID.test(room)) return undefined;
  const query = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  if (room !== '') query.set('event_id', room);
  if (before !== undefined) query.set('before', String(before));
  return `?${query.toString()}`;
}

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function row(entry: AuditEntry): HTMLElement {
  const changed = changes(entry.before, entry.after);
  const what =
    changed.length > 0
      ? h('ul', { class: 'changes' }, ...changed.map((c) => h('li', { class: 'mono' }, c)))
      : h('span', { class: 'mono' }, entry.request === undefined || entry.request === null ? '' : JSON.stringify(entry.request));
  return h(
    'tr',
    {},
    h('td', {}, when.format(new Date(entry.at))),
    h('td', {}, entry.event_id ?? '—'),
    h('td', {}, entry.caller, h('br'), h('span', { class: 'hint' }, entry.address)),
    h('td', { class: 'mono' }, entry.action),
    h('td', {}, what),
  );
}

export class AuditView {
  private entries: AuditEntry[] = [];
  private nextBefore: number | undefined;
  /** The room the loaded entries are of ('' = every room), undefined before the first load. */
  private loadedRoom: string | undefined;
  /** Counts loads: an answer to an older one (the room changed meanwhile) is dropped. */
  private loads = 0;
  private api: PanelApi | undefined;
  private readonly ui = {
    room: element<HTMLInputElement>('audit-room'),
    body: element('audit-rows'),
    status: element('audit-status'),
    load: element<HTMLButtonElement>('audit-load'),
    older: element<HTMLButtonElement>('audit-older'),
  };

  constructor() {
    this.ui.load.addEventListener('click', () => void this.reload());
    this.ui.older.addEventListener('click', () => void this.page());
    // A room typed (Enter, or leaving the field) loads that room's changes from the server.
    this.ui.room.addEventListener('change', () => void this.reload());
  }

  connect(api: PanelApi | undefined): void {
    this.api = api;
    element('audit-card').hidden = api === undefined;
    this.entries = [];
    this.nextBefore = undefined;
    this.loadedRoom = undefined;
    this.render();
  }

  async reload(): Promise<void> {
    this.entries = [];
    this.nextBefore = undefined;
    this.loadedRoom = undefined;
    this.loads++;
    await this.page();
  }

  private async page(): Promise<void> {
    if (!this.api) return;
    // "Load older" goes on with the room already loaded; a reload takes the room typed now.
    const room = this.loadedRoom ?? this.ui.room.value.trim();
    const query = auditQuery(room, this.nextBefore);
    if (query === undefined) {
      this.ui.room.setAttribute('aria-invalid', 'true');
      setNotice(this.ui.status, 'A room ID is 1–128 letters, digits and . _ ~ - (or leave it empty for every room).', 'error');
      return;
    }
    this.ui.room.removeAttribute('aria-invalid');
    setNotice(this.ui.status, 'Loading the audit log…', 'info');
    const load = this.loads;
    const answer = await this.api.send('GET', `/audit${query}`);
    if (load !== this.loads) return;
    if (answer.status !== 200) {
      setNotice(this.ui.status, `The audit log could not be read — ${answer.message}`, 'error');
      return;
    }
    const body = answer.body as { entries?: AuditEntry[]; next_before?: number };
    this.entries.push(...(body.entries ?? []));
    this.nextBefore = body.next_before;
    this.loadedRoom = room;
    this.render();
  }

  private render(): void {
    this.ui.body.replaceChildren(...this.entries.map(row));
    this.ui.older.hidden = this.nextBefore === undefined;
    const room = this.loadedRoom;
    const scope = room === '' ? 'every room' : `room ${room}`;
    setNotice(
      this.ui.status,
      room === undefined ? 'Not loaded yet.' : `${this.entries.length} latest change${this.entries.length === 1 ? '' : 's'} (${scope})${this.nextBefore === undefined ? '' : ', more with Load older'}.`,
      'info',
    );
  }
}
