// The audit log (GET /private/audit, newest first, docs/operations.md "Audit log"): who changed what, when,
// from where, with the values before and after — filtered by room. Pages of 100 are loaded on demand; the
// filter applies to what is loaded ("Load older" goes further back).

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

/** The entries of one room ('' = every room). */
export function filterEntries(entries: readonly AuditEntry[], room: string): AuditEntry[] {
  return room === '' ? [...entries] : entries.filter((e) => e.event_id === room);
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
    this.ui.room.addEventListener('input', () => this.render());
  }

  connect(api: PanelApi | undefined): void {
    this.api = api;
    element('audit-card').hidden = api === undefined;
    this.entries = [];
    this.nextBefore = undefined;
    this.render();
  }

  async reload(): Promise<void> {
    this.entries = [];
    this.nextBefore = undefined;
    await this.page();
  }

  private async page(): Promise<void> {
    if (!this.api) return;
    setNotice(this.ui.status, 'Loading the audit log…', 'info');
    const query = this.nextBefore === undefined ? '?limit=100' : `?limit=100&before=${this.nextBefore}`;
    const answer = await this.api.send('GET', `/audit${query}`);
    if (answer.status !== 200) {
      setNotice(this.ui.status, `The audit log could not be read — ${answer.message}`, 'error');
      return;
    }
    const body = answer.body as { entries?: AuditEntry[]; next_before?: number };
    this.entries.push(...(body.entries ?? []));
    this.nextBefore = body.next_before;
    this.render();
  }

  private render(): void {
    const room = this.ui.room.value.trim();
    const shown = filterEntries(this.entries, room);
    this.ui.body.replaceChildren(...shown.map(row));
    this.ui.older.hidden = this.nextBefore === undefined;
    const scope = room === '' ? 'every room' : `room ${room}`;
    setNotice(
      this.ui.status,
      this.entries.length === 0 ? 'Not loaded yet.' : `${shown.length} of the ${this.entries.length} latest changes (${scope}).`,
      'info',
    );
  }
}
