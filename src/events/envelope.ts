// The envelope of every emitted event: EventBridge's, which VWR's consumers already parse.

import { randomUUID } from 'node:crypto';
import type { DetailType, EventDetails } from '../domain/ports/events.ts';

export type { DetailType, EventDetails };

export interface Envelope<T extends DetailType = DetailType> {
  version: '0';
  id: string;
  source: 'custom.waitingroom';
  'detail-type': T;
  time: string;
  detail: EventDetails[T];
}

export function envelope<T extends DetailType>(type: T, detail: EventDetails[T], nowMs: number): Envelope<T> {
  return {
    version: '0',
    id: randomUUID(),
    source: 'custom.waitingroom',
    'detail-type': type,
    time: new Date(nowMs).toISOString(),
    detail,
  };
}
