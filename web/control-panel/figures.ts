// What the panel says about a room, in plain words: the figures (each a count of people of one kind, with its
// help text), the phase, and the check before an increment. Pure (no DOM), so it is tested in Node.

import type { BotDefenceOutcome } from '../../src/domain/bot-defence.ts';

/** GET /private/rooms/{event_id}/figures (src/domain/room-figures.ts). */
export interface RoomFigures {
  phase: string;
  queue: number;
  serving: number;
  in_line: number;
  awaiting_claim: number;
  active_sessions: number;
  room_in_queue: number;
  let_in_ahead: number;
  admitted_last_minute: number;
  /** In the pre-queue of a room that draws: no position yet, not counted in Waiting (absent from older servers). */
  prequeue_num?: number;
  /** What the bot defence did in the room on the node answering (since it started); absent without bot_defence. */
  bot_defence?: Partial<Record<BotOutcome, number>>;
}

/** The bot defence's outcomes, as the server counts them (src/domain/bot-defence.ts). */
export type BotOutcome = BotDefenceOutcome;

/** The figures a VWR private API gives (no rooms API): its counters, without the line beyond the counter. */
export interface LegacyFigures {
  serving: number;
  waiting_num: number;
  active_tokens: number;
}

export interface Figure {
  id: string;
  label: string;
  help: string;
}

/** The figures of a room, in the order shown. The ids are the elements' (c-…). */
export const FIGURES: readonly Figure[] = [
  { id: 'c-waiting', label: 'Waiting', help: 'In line; the serving counter has not reached them yet.' },
  {
    id: 'c-prequeue',
    label: 'In the pre-queue',
    help: 'Joined before the start; the draw gives them their places (not counted in Waiting until then).',
  },
  {
    id: 'c-awaiting',
    label: 'Let in, not yet arrived',
    help: 'Their turn has come but they have not claimed their token yet (until their claim window expires).',
  },
  { id: 'c-active', label: 'Active sessions', help: 'Token claimed, session open and not expired.' },
  { id: 'c-serving', label: 'Serving counter', help: 'Everyone with a position up to this number may enter.' },
  { id: 'c-queue', label: 'Joined', help: 'Positions handed out since the last reset (whoever left included).' },
  { id: 'c-rate', label: 'Let in, last minute', help: 'Positions the serving counter reached in the last 60 seconds.' },
  // The bot defence (rooms with bot_defence only), counted by the node that answers since it started.
  { id: 'b-issued', label: 'Challenges issued', help: 'Proof-of-work challenges handed out (this node, since it started; /metrics has every node).' },
  { id: 'b-solved', label: 'Challenges solved', help: 'Joins that came with a valid, unused solution (this node).' },
  { id: 'b-failed', label: 'Challenges failed', help: 'Joins refused for an invalid, expired or replayed solution (this node).' },
  { id: 'b-missing', label: 'Joins asked for work', help: 'Joins refused for want of a solution; the waiting-room page then solves one by itself (this node).' },
  { id: 'b-limited', label: 'Joins refused by limits', help: 'Joins over joins_per_client_per_minute (this node).' },
  { id: 'b-parked', label: 'Bot-flagged places', help: 'Caught joins given a place that is never served (infinite queue, this node).' },
  { id: 'b-floods', label: 'Floods detected', help: 'Times the room\'s join rate tripped auto\'s flood detector (this node).' },
];

/** The bot defence's figures by element id, for a room that has one. */
export function botFigureValues(b: Partial<Record<BotOutcome, number>>): Record<string, number> {
  const n = (outcome: BotOutcome) => b[outcome] ?? 0;
  return {
    'b-issued': n('challenge_issued'),
    'b-solved': n('challenge_solved'),
    'b-failed': n('challenge_invalid') + n('challenge_replayed'),
    'b-missing': n('challenge_missing'),
    'b-limited': n('join_limited'),
    'b-parked': n('parked'),
    'b-floods': n('flood_detected'),
  };
}

/** The figures' values by element id; undefined shows as a dash (not known from this server). */
export function figureValues(f: RoomFigures): Record<string, number> {
  return {
    'c-waiting': f.in_line,
    'c-awaiting': f.awaiting_claim,
    'c-active': f.active_sessions,
    'c-serving': f.serving,
    'c-queue': f.queue,
    'c-rate': f.admitted_last_minute,
    ...(showsPrequeue(f) ? { 'c-prequeue': f.prequeue_num ?? 0 } : {}),
    ...(f.bot_defence ? botFigureValues(f.bot_defence) : {}),
  };
}

/** The pre-queue figure is shown while it can matter: someone is in it, or the room has not started yet. */
export function showsPrequeue(f: RoomFigures): boolean {
  return f.prequeue_num !== undefined && (f.prequeue_num > 0 || f.phase === 'before' || f.phase === 'prequeue');
}

export function legacyFigureValues(f: LegacyFigures): Record<string, number | undefined> {
  return { 'c-waiting': f.waiting_num, 'c-active': f.active_tokens, 'c-serving': f.serving };
}

/** Said when the counter is past the last position handed out (an operator let in more than were waiting). */
export function aheadText(f: RoomFigures): string {
  if (f.let_in_ahead === 0) return '';
  const n = f.let_in_ahead;
  return `The serving counter is ${count(n, 'place')} past the last position handed out: the next ${count(n, 'person', 'people')} to join will be let in at once, without waiting.`;
}

export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

// ---- the increment check ----

export interface OverAdmit {
  /** How far the counter may move before it passes the last position handed out. */
  room: number;
  inLine: number;
  /** Places the increment would give to people who have not joined yet. */
  extra: number;
  text: string;
}

/**
 * Whether moving the counter by `by` would let in more than are waiting — move it past the last position
 * handed out, so the next arrivals skip the line — from the figures read just before. Undefined when it would not.
 */
export function overAdmit(f: RoomFigures, by: number): OverAdmit | undefined {
  if (by <= f.room_in_queue) return undefined;
  const extra = by - f.room_in_queue;
  const waiting = f.in_line === 0 ? 'Nobody is waiting' : `Only ${count(f.in_line, 'person is', 'people are')} waiting`;
  const text =
    `${waiting} (the serving counter can move ${count(f.room_in_queue, 'place')} before it passes the last position handed out). ` +
    `Letting in ${by.toLocaleString('en')} lets the next ${count(extra, 'person', 'people')} to join in at once, without waiting.`;
  return { room: f.room_in_queue, inLine: f.in_line, extra, text };
}

// ---- the phase ----

export interface RoomTimes {
  prequeue_start_time?: string | undefined;
  event_start_time?: string | undefined;
  event_end_time?: string | undefined;
  shuffle_at_event_start?: boolean | undefined;
  admission?: string | undefined;
  new_users_per_minute?: number | undefined;
  total_active_users?: number | undefined;
}

export const PHASE_LABELS: Record<string, string> = {
  before: 'Not open yet',
  prequeue: 'Pre-queue',
  open: 'Open',
  paused: 'Paused',
  closed: 'Closed',
  off: 'Off (no queue)',
  ended: 'Ended',
};

/** "in 1 h 02 min", "in 45 s", for a time `ms` after now. */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return `in ${d} d ${h} h`;
  if (h > 0) return `in ${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `in ${m} min ${String(sec).padStart(2, '0')} s`;
  return `in ${sec} s`;
}

/** What the phase means for joins and admission, with the countdown to the next step of the schedule. */
export function phaseText(phase: string, room: RoomTimes, nowMs: number): string {
  const until = (iso: string | undefined) => (iso === undefined ? undefined : countdown(Date.parse(iso) - nowMs));
  const admitting =
    room.admission === 'automatic'
      ? `admitting by itself, up to ${count(room.new_users_per_minute ?? 0, 'person', 'people')} a minute and ${count(room.total_active_users ?? 0, 'person', 'people')} in at once`
      : 'you let people in by moving the serving counter';
  switch (phase) {
    case 'before':
      return `Joins are refused until the pre-queue opens ${until(room.prequeue_start_time) ?? ''} (${room.prequeue_start_time ?? ''}).`;
    case 'prequeue': {
      const start = room.event_start_time;
      if (start !== undefined && Date.parse(start) > nowMs) {
        const draw = room.shuffle_at_event_start ? ' Everyone who joins before then gets a random place in the draw.' : '';
        return `Joins are accepted; nobody is let in before the start ${until(start)} (${start}).${draw}`;
      }
      return 'The start has come: the draw is giving the pre-queue their places; admission begins when it is done.';
    }
    case 'open':
      return `Joins are accepted; ${admitting}.${room.event_end_time ? ` The room closes ${until(room.event_end_time)} (${room.event_end_time}).` : ''}`;
    case 'paused':
      return 'Joins are accepted; nobody is let in (automatic admission, inlets and the expiry job hold) until you resume. Moving the counter by hand still works.';
    case 'closed':
      return 'Joins are refused ("Waiting room is closed"); nobody is let in until you resume.';
    case 'off':
      return 'No queue: everyone who joins is let in at once.';
    case 'ended':
      return `The schedule ended at ${room.event_end_time ?? 'its end time'}: joins are refused.`;
    default:
      return '';
  }
}
