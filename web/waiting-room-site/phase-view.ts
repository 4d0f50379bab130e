// What the page shows for the room's phase (issue 33). The phase itself is the server's (src/domain/room-phase.ts,
// sent in the page, on the counter stream and in the gate's answers); this module only says which card and which
// words go with it, without the DOM, so that each rule is tested in Node (test/web/phase-view.test.ts).

/** The page's phases (the template's `phase`): the room's phase, seen by a visitor. */
export type PagePhase = 'before' | 'prequeue' | 'waiting' | 'your_turn' | 'paused' | 'closed' | 'ended';

/** The page phase of a room phase as the server sends it (`before`, `prequeue`, `open`, `paused`, `closed`, `off`, `ended`). */
export function pagePhaseOfRoom(roomPhase: string | undefined): PagePhase | undefined {
  switch (roomPhase) {
    case 'before':
    case 'prequeue':
    case 'paused':
    case 'closed':
    case 'ended':
      return roomPhase;
    case 'open':
    case 'off':
      return 'waiting';
    default:
      return undefined;
  }
}

export type Card = 'none' | 'intro' | 'queue' | 'checkout' | 'ending';

/**
 * The one card a visitor sees: never two phases at once. A visitor whose turn came keeps the checkout whatever the
 * room does (a closed room still lets the admitted claim); before the opening nobody can join; closed and ended end
 * the visit of anyone still in line; otherwise the line, or Reserve.
 */
export function cardFor(phase: PagePhase, visitor: { inLine: boolean; served: boolean }): Card {
  if (visitor.served) return 'checkout';
  if (phase === 'closed' || phase === 'ended') return 'ending';
  if (phase === 'before') return 'none';
  return visitor.inLine ? 'queue' : 'intro';
}

/** The ending's sentence: for a visitor in line, that their turn did not come; for anyone else, the phase. */
export function endingKey(phase: 'closed' | 'ended', inLine: boolean): string {
  if (inLine) return phase === 'ended' ? 'ending_ended' : 'ending_closed';
  return phase === 'ended' ? 'phase_ended' : 'phase_closed';
}

/**
 * What the estimate says when it cannot give a time (or when the phase overrides it): "Paused" only when the room is
 * paused; otherwise what the line waits for, in plain words — the start, the first admission, someone finishing (a
 * room that admits by itself within a capacity), or the next people let in (an operator or an inlet).
 */
export function waitWords(
  kind: 'stalled' | 'range' | 'estimating' | 'served',
  room: { phase: PagePhase; serving: number | undefined; admission: string },
): { eta: string; note: string } | undefined {
  if (room.phase === 'paused') return { eta: 'paused', note: 'paused_note' };
  if (room.phase === 'before' || room.phase === 'prequeue') return { eta: 'waiting_start', note: 'waiting_start_note' };
  if (kind !== 'stalled') return undefined;
  if (room.serving === 0) return { eta: 'not_started', note: 'not_started_note' };
  if (room.admission === 'automatic') return { eta: 'waiting_finish', note: 'waiting_finish_note' };
  return { eta: 'waiting_next', note: 'waiting_next_note' };
}

/** The people ahead to show: the server's count of those still waiting (without those who left), never more than the gap. */
export function aheadToShow(position: number, serving: number, serverAhead: number | undefined): number {
  const gap = Math.max(0, position - serving - 1);
  return serverAhead === undefined ? gap : Math.max(0, Math.min(serverAhead, gap));
}

/** The short queue ID of a request ID ("6F1C-2A3E"): the same as the server's (src/web/page-template.ts queueId). */
export function queueIdOf(requestId: string): string {
  const hex = requestId.replace(/[^0-9a-fA-F]/g, '').slice(0, 8).toUpperCase();
  return hex.length < 8 ? '' : `${hex.slice(0, 4)}-${hex.slice(4)}`;
}

/** Seconds as h:mm:ss or mm:ss. */
export function clockText(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${seconds >= 3600 ? `${Math.floor(seconds / 3600)}:` : ''}${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}
