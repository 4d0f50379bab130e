// How many people wait in a room's pre-queue (rooms with shuffle_at_event_start, spec rooms.md §3): listed,
// not left, no position yet. They are not in `waiting_num` — that figure is VWR's (queue − tokens − expired,
// spec core-api.md: inlets and VWR clients compute with it), and a pre-queue entry has no position before the
// draw — so the operator's figures, /metrics, the history and the report carry this one beside it
// (`prequeue_num`, docs/rooms.md "Control panel").
//
//   committed  every entry listed and not left
//   drawing    the drawn entries whose place is not numbered yet, and the late arrivals not numbered yet
//              (those that left while the draw ran are counted until the numbering passes them: the draw
//              lasts seconds)
//   done       nobody: every entry has a position, and counts in waiting_num

import type { DrawRecord, DrawStore } from './ports/store.ts';
import { roomDraws } from './prequeue.ts';
import type { RoomSettings } from './room-settings.ts';

export function prequeueWaiting(draw: DrawRecord | null): number {
  if (!draw || draw.state === 'done') return 0;
  const listed = draw.listed ?? 0;
  const left = draw.leftPrequeue ?? 0;
  if (draw.state === 'committed') return Math.max(0, listed - left);
  // Entries that left before the draw started are the ones it did not fix: drawnThrough − entryCount.
  const leftLate = Math.max(0, left - (draw.drawnThrough - draw.entryCount));
  const lateWaiting = Math.max(0, listed - draw.numberedThrough - leftLate);
  return Math.max(0, draw.entryCount - draw.progress) + lateWaiting;
}

/** The room's pre-queue figure, read now (0 without a draw: joins there get positions at once). */
export async function readPrequeueNum(store: Pick<DrawStore, 'getDraw'>, room: RoomSettings): Promise<number> {
  if (!roomDraws(room)) return 0;
  return prequeueWaiting(await store.getDraw(room.event_id));
}
