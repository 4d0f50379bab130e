// The list of rooms: each room's phase and its people (waiting, let in and not arrived, active sessions, the
// serving counter); a room's name opens it below.

import type { Room } from './api.ts';
import { h, formatNumber } from './dom.ts';
import { PHASE_LABELS, showsPrequeue, type RoomFigures } from './figures.ts';

export function phaseBadge(phase: string): HTMLElement {
  return h('span', { class: `phase phase-${phase}` }, PHASE_LABELS[phase] ?? phase);
}

export function renderRooms(
  list: HTMLElement,
  rooms: readonly Room[],
  figures: ReadonlyMap<string, RoomFigures>,
  selected: string,
  open: (eventId: string) => void,
): void {
  const items = rooms.map((room) => {
    const f = figures.get(room.event_id);
    const figure = (label: string, value: number | undefined) => h('div', {}, h('dt', {}, label), h('dd', {}, formatNumber(value)));
    const button = h('button', { type: 'button', class: 'link', 'aria-label': `Open room ${room.event_id}` }, room.event_id);
    button.addEventListener('click', () => open(room.event_id));
    return h(
      'li',
      { class: room.event_id === selected ? 'room-item selected' : 'room-item', 'aria-current': room.event_id === selected ? 'true' : undefined },
      h('div', { class: 'room-head' }, button, phaseBadge(f?.phase ?? room.phase)),
      h(
        'dl',
        { class: 'mini' },
        figure('Waiting', f?.in_line),
        ...(f && showsPrequeue(f) ? [figure('In the pre-queue', f.prequeue_num)] : []),
        figure('Let in, not yet arrived', f?.awaiting_claim),
        figure('Active sessions', f?.active_sessions),
        figure('Serving counter', f?.serving),
      ),
    );
  });
  list.replaceChildren(...items);
  if (items.length === 0) list.replaceChildren(h('li', { class: 'hint' }, 'No rooms yet: create one.'));
}
