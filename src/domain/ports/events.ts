// The events the waiting room emits (spec: token_generated, session_updated, automatic_serving_counter_incr,
// waiting_room_metrics; spec/rooms.md §4: queue_left) and the port it emits them through. The domain names the event and its detail; the
// events adapter (src/events/) wraps it in the EventBridge envelope VWR's consumers parse and delivers it.

export interface EventDetails {
  token_generated: { event_id: string; request_id: string };
  session_updated: { event_id: string; request_id: string; status: 'completed' | 'abandoned' };
  /** A visitor gave their place up (leave_queue). */
  queue_left: { event_id: string; request_id: string };
  /**
   * An admitted visitor's arrival window passed without a claim (issue 34): they stop counting against
   * total_active_users, and may still claim until their claim window ends.
   */
  visitor_no_show: { event_id: string; queue_number: number; arrival_window: number };
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

/** Where the domain publishes an event, after the state it describes is durable. Never blocks, never throws. */
export interface EventPublisher {
  publish<T extends DetailType>(type: T, detail: EventDetails[T]): void;
}
