// The events the waiting room emits, in the EventBridge envelope VWR's consumers already parse.

import { randomUUID } from 'node:crypto';

export interface EventDetails {
  token_generated: { event_id: string; request_id: string };
  session_updated: { event_id: string; request_id: string; status: 'completed' | 'abandoned' };
  automatic_serving_counter_incr: {
    event_id: string;
    previous_serving_counter_position: number;
    increment_by: number;
    current_serving_counter_position: number;
  };
  waiting_room_metrics: {
    event_id: string;
    num_active_tokens: number;
    total_num_tokens: number;
    queue_counter: number;
    serving_number: number;
    completed_sessions: number;
    abandoned_sessions: number;
    expired_queue_positions: number;
    waiting_num: number;
  };
}

export type DetailType = keyof EventDetails;

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
