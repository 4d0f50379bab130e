// The room that is open: its phase (with the countdown of its schedule), pause / resume / close, the draw's
// commitment (and seed after the draw), and its figures, each with what it counts.

import type { DrawPublication, Room } from './api.ts';
import { element, formatNumber, h } from './dom.ts';
import { FIGURES, aheadText, count, figureValues, legacyFigureValues, phaseText, type LegacyFigures, type RoomFigures, type RoomTimes } from './figures.ts';
import { phaseBadge } from './rooms-view.ts';

const ui = {
  title: element('room-title'),
  phase: element('room-phase'),
  phaseText: element('phase-text'),
  stateActions: element('state-actions'),
  pause: element<HTMLButtonElement>('pause'),
  resume: element<HTMLButtonElement>('resume'),
  close: element<HTMLButtonElement>('close'),
  edit: element<HTMLButtonElement>('edit'),
  draw: element('draw'),
  figures: element('figures'),
  ahead: element('ahead'),
  updated: element('updated'),
};

/** The figures' elements, with their help text, built once. */
export function buildFigures(): void {
  ui.figures.replaceChildren(
    ...FIGURES.map((f) =>
      h(
        'div',
        { id: `${f.id}-box` },
        h('dt', { id: `${f.id}-label` }, f.label),
        h('dd', { id: f.id, 'aria-describedby': `${f.id}-help` }, '–'),
        // A second dd (a dl's group holds only dt and dd): what the figure counts.
        h('dd', { class: 'figure-help', id: `${f.id}-help` }, f.help),
      ),
    ),
  );
}

/** VWR's waiting_num counts more than Anteroom's line: its help says so. */
const LEGACY_WAITING_HELP = "VWR's waiting_num: everyone with a position and no token yet, those let in who have not arrived included.";

function showValues(values: Record<string, number | undefined>, legacy = false): void {
  for (const f of FIGURES) {
    element(`${f.id}-help`).textContent = legacy && f.id === 'c-waiting' ? LEGACY_WAITING_HELP : f.help;
    element(f.id).textContent = formatNumber(values[f.id]);
    element(`${f.id}-box`).hidden = !(f.id in values);
  }
}

export function clearRoom(): void {
  showValues(Object.fromEntries(FIGURES.map((f) => [f.id, undefined])));
  ui.ahead.textContent = '';
  ui.updated.textContent = '';
}

export function renderRoom(room: Room, figures: RoomFigures | undefined, nowMs: number): void {
  ui.title.textContent = `Room ${room.event_id}`;
  const phase = figures?.phase ?? room.phase;
  ui.phase.replaceChildren(phaseBadge(phase));
  ui.phaseText.textContent = phaseText(phase, room as RoomTimes, nowMs);
  ui.stateActions.hidden = false;
  const state = room.state ?? 'open';
  ui.pause.hidden = state === 'paused' || state === 'closed';
  ui.resume.hidden = state === 'open' || state === 'off';
  ui.resume.textContent = state === 'closed' ? 'Reopen…' : 'Resume…';
  ui.close.hidden = state === 'closed';
  ui.edit.hidden = false;
  if (figures) {
    showValues(figureValues(figures));
    ui.ahead.className = figures.let_in_ahead > 0 ? 'notice warn' : 'notice';
    ui.ahead.textContent = aheadText(figures);
  }
  ui.updated.textContent = `Updated ${new Date(nowMs).toLocaleTimeString()}.`;
}

/** A VWR private API: one event, its counters only. */
export function renderLegacy(eventId: string, figures: LegacyFigures, nowMs: number): void {
  ui.title.textContent = `Event ${eventId}`;
  ui.phase.replaceChildren();
  ui.phaseText.textContent = 'This server has no rooms API (a VWR deployment): the figures below are its own counters.';
  ui.stateActions.hidden = true;
  ui.draw.hidden = true;
  showValues(legacyFigureValues(figures), true);
  ui.ahead.textContent = '';
  ui.updated.textContent = `Updated ${new Date(nowMs).toLocaleTimeString()}.`;
}

/** The browser check of a room's draw, served by Anteroom beside its public API (docs/rooms.md "Checking a place"). */
export function drawCheckUrl(publicApiUrl: string, eventId: string): string {
  return `${publicApiUrl.replace(/\/+$/, '')}/draw-check/?event_id=${encodeURIComponent(eventId)}`;
}

/** The draw of a room with shuffle_at_event_start: the commitment, then the seed and the published entries. */
export function renderDraw(eventId: string, draw: DrawPublication | undefined, url: string, publicApiUrl: string): void {
  if (!draw) {
    ui.draw.hidden = true;
    ui.draw.replaceChildren();
    return;
  }
  ui.draw.hidden = false;
  const rows: (Node | string)[] = [
    h('h3', {}, 'The draw'),
    h('p', { class: 'hint' }, `Algorithm ${draw.algorithm}. The commitment is the SHA-256 of the seed, published before the start: the seed cannot be chosen after the entries are known.`),
    h('dl', { class: 'facts' }, h('dt', {}, 'Commitment'), h('dd', { id: 'draw-commitment', class: 'mono' }, draw.commitment)),
  ];
  if (draw.committed_at !== undefined) {
    rows.push(h('p', { class: 'hint', id: 'draw-committed-at' }, `Published at ${new Date(draw.committed_at).toLocaleString()} (${draw.committed_at} UTC)${draw.drawn_at ? `; drawn at ${new Date(draw.drawn_at).toLocaleString()} (${draw.drawn_at} UTC)` : ''}.`));
  }
  if (draw.seed !== undefined) {
    const entries = draw.entries?.length ?? 0;
    rows.push(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Seed'),
        h('dd', { id: 'draw-seed', class: 'mono' }, draw.seed),
        h('dt', {}, 'Result'),
        h('dd', { id: 'draw-result' }, `${count(entries, 'entry', 'entries')} drawn; place 1 got position ${formatNumber(draw.first_position)}. `, h('a', { href: url, target: '_blank', rel: 'noopener' }, 'The published draw (JSON)')),
      ),
      h(
        'p',
        { class: 'hint', id: 'draw-check' },
        'Anyone can check it in their browser: ',
        h('a', { href: drawCheckUrl(publicApiUrl, eventId), target: '_blank', rel: 'noopener' }, 'the draw check page'),
        ' (give visitors this address; on a gated site, /_anteroom/draw). Or from a checkout of Anteroom: ',
        h('code', {}, `node bin/anteroom.js verify-draw --public-url ${publicApiUrl} --event-id ${eventId} --commitment ${draw.commitment}`),
      ),
    );
  } else {
    rows.push(h('p', { class: 'hint', id: 'draw-pending' }, 'The seed and the entries are published when the draw is done, at the start.'));
  }
  ui.draw.replaceChildren(...rows);
}
