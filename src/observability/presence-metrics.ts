// Presence gauges on /metrics (issue 34; src/domain/presence-figures.ts says what each counts), read once per
// scrape for the rooms whose admission looks at presence or arrival windows, never on the request path.

import { Gauge, type Registry } from 'prom-client';
import type { PresenceFigures } from '../domain/presence-figures.ts';
import { presenceApplies } from '../domain/presence-settings.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';

const GAUGES: [keyof PresenceFigures, string, string][] = [
  ['present_waiting', 'anteroom_present_waiting', 'Visitors in line seen within presence_timeout'],
  ['absent_waiting', 'anteroom_absent_waiting', 'Visitors in line not seen within presence_timeout'],
  ['no_shows', 'anteroom_no_shows', 'Admitted visitors past their arrival window without a claim'],
  ['late_arrivals', 'anteroom_late_arrivals', 'Claims made after the visitor had stopped counting (passed while absent, or past the arrival window)'],
  ['overshoot', 'anteroom_overshoot', 'How far an automatic room is over total_active_users (at most the late arrivals)'],
];

export function watchPresence(registry: Registry, room: Pick<WaitingRoom, 'rooms' | 'reports' | 'presence'>): void {
  let scrape: Promise<void> | null = null;
  const readAll = (): Promise<void> => {
    scrape ??= (async () => {
      for (const eventId of room.rooms.roomIds()) {
        const settings = room.rooms.roomSettings(eventId);
        if (!settings || !presenceApplies(settings)) continue;
        const counters = await room.reports.counters(eventId);
        const figures = await room.presence.figures(settings, { activeSessions: counters.activeTokens });
        for (const [key, gauge] of gauges) gauge.set({ event_id: eventId }, figures[key]);
      }
    })().finally(() => setImmediate(() => (scrape = null)));
    return scrape;
  };
  const gauges = GAUGES.map(([key, name, help]) => [key, new Gauge({ name, help, labelNames: ['event_id'], registers: [registry], collect: readAll })] as const);
}
