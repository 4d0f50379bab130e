// The panel's calls: the private API (signed by the one private-API client) and the public one, each answer
// checked. A failure says what failed and whether polling again may help (Transient) or not (Refused).

import { errorMessage, isRetryableStatus } from '../shared/retry.ts';
import type { PrivateApiClient } from '../../src/client/private-api-client.ts';
import type { LegacyFigures, RoomFigures } from './figures.ts';
import type { ReportMinute, ReportTotals } from '../../src/domain/room-report.ts';

/** GET /private/rooms/{id}/report. */
export interface RoomReport {
  event_id: string;
  from: number;
  to: number;
  totals: ReportTotals;
  minutes: ReportMinute[];
}

/** A failure a later poll may not see (network, 429, 5xx). */
export class Transient extends Error {}
/** An answer that polling again will not change (refused credentials, unknown event). */
export class Refused extends Error {}

/** A room as GET /private/rooms answers it: its settings (secrets left out) and its phase. */
export type Room = Record<string, unknown> & { event_id: string; phase: string; state?: string };

/** GET /draw: the commitment before the draw; the seed and entries after it. */
export interface DrawPublication {
  algorithm: string;
  commitment: string;
  /** When the commitment was first published, and when the draw took place (ISO 8601 UTC). */
  committed_at?: string;
  drawn_at?: string;
  seed?: string;
  first_position?: number;
  entries?: string[];
}

export interface Answer {
  status: number;
  body: unknown;
  message: string;
}

export class PanelApi {
  readonly api: PrivateApiClient;
  readonly publicApiUrl: string;
  constructor(api: PrivateApiClient, publicApiUrl: string) {
    this.api = api;
    this.publicApiUrl = publicApiUrl;
  }

  /** A private call, whatever its status; a network failure is Transient. */
  async send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Answer> {
    let response: Response;
    try {
      response = await this.api.send(method, path, body);
    } catch {
      throw new Transient(`${method} ${path}: network error (server unreachable, or CORS refused)`);
    }
    return answerOf(response);
  }

  /** A private GET that must answer 200. */
  async read<T>(what: string, path: string): Promise<T> {
    return checked(what, await this.send('GET', path)) as T;
  }

  /** GET /private/rooms; undefined when the server has no rooms API (VWR's private API answers 404). */
  async rooms(): Promise<Room[] | undefined> {
    const answer = await this.send('GET', '/rooms');
    if (answer.status === 404) return undefined;
    return (checked('rooms', answer) as { rooms: Room[] }).rooms;
  }

  figures(eventId: string): Promise<RoomFigures> {
    return this.read('figures', `/rooms/${encodeURIComponent(eventId)}/figures`);
  }

  /** The figures, or undefined for a room gone since the list was read (404). */
  async figuresIfServed(eventId: string): Promise<RoomFigures | undefined> {
    const answer = await this.send('GET', `/rooms/${encodeURIComponent(eventId)}/figures`);
    return answer.status === 404 ? undefined : (checked('figures', answer) as RoomFigures);
  }

  /** The room's report (its history, one row a minute) from `from` to `to` (epoch s); undefined without one (404). */
  async report(eventId: string, from: number, to: number): Promise<RoomReport | undefined> {
    const answer = await this.send('GET', `/rooms/${encodeURIComponent(eventId)}/report?from=${Math.floor(from)}&to=${Math.floor(to)}`);
    if (answer.status === 404) return undefined;
    return checked('report', answer) as RoomReport;
  }

  /** VWR's counters: serving_num and waiting_num (public), num_active_tokens (private). */
  async legacyFigures(eventId: string): Promise<LegacyFigures> {
    const q = `event_id=${encodeURIComponent(eventId)}`;
    const [serving, waiting, active] = await Promise.all([
      this.publicRead<{ serving_counter: number }>('serving_num', `/serving_num?${q}`),
      this.publicRead<{ waiting_num: number }>('waiting_num', `/waiting_num?${q}`),
      this.read<{ active_tokens: number }>('num_active_tokens', `/num_active_tokens?${q}`),
    ]);
    const figures = { serving: Number(serving.serving_counter), waiting_num: Number(waiting.waiting_num), active_tokens: Number(active.active_tokens) };
    if (Object.values(figures).some((n) => !Number.isFinite(n))) throw new Refused('Unexpected answer from the API.');
    return figures;
  }

  /** GET /draw; undefined for a room without a draw (404). */
  async draw(eventId: string): Promise<DrawPublication | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.publicApiUrl}/draw?event_id=${encodeURIComponent(eventId)}`, { cache: 'no-store' });
    } catch {
      throw new Transient('draw: network error');
    }
    const answer = await answerOf(response);
    if (answer.status === 404) return undefined;
    return checked('draw', answer) as DrawPublication;
  }

  drawUrl(eventId: string): string {
    return `${this.publicApiUrl}/draw?event_id=${encodeURIComponent(eventId)}`;
  }

  private async publicRead<T>(what: string, path: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.publicApiUrl}${path}`, { cache: 'no-store' });
    } catch {
      throw new Transient(`${what}: network error (server unreachable, or CORS refused)`);
    }
    return checked(what, await answerOf(response)) as T;
  }
}

async function answerOf(response: Response): Promise<Answer> {
  const message = response.status >= 400 ? await errorMessage(response) : '';
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  return { status: response.status, body, message };
}

/** The body of a 200, or the failure as Transient or Refused. */
export function checked(what: string, answer: Answer): unknown {
  if (answer.status === 200) return answer.body;
  const message = `${what}: ${answer.message || answer.status}`;
  if (isRetryableStatus(answer.status)) throw new Transient(message);
  if (answer.status === 401 || answer.status === 403) throw new Refused(`${message} — the private API refused these credentials.`);
  throw new Refused(message);
}

/** The error text of a JSON error body (without the status), for messages shown next to a field. */
export function errorText(answer: Answer): string {
  const body = answer.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : answer.message;
}

/** Every problem of a 400 for a room's settings ("field: rule" each), when the server lists them; else its error. */
export function problemTexts(answer: Answer): string[] {
  const body = answer.body as { problems?: unknown } | undefined;
  const listed = Array.isArray(body?.problems)
    ? body.problems.filter((p): p is { field: string; rule: string } => typeof p?.field === 'string' && typeof p?.rule === 'string')
    : [];
  return listed.length > 0 ? listed.map((p) => (p.field ? `${p.field}: ${p.rule}` : p.rule)) : [errorText(answer)];
}
