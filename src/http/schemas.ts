// JSON schemas of every request, validated at the edge by Fastify (ajv). Identifiers are only bounded here;
// whether an event exists or a request ID is a well-formed UUID is the domain's call, so that those answer
// with the contract's own messages ("Invalid event ID", "Invalid event or request ID").

import { Type, type TSchema } from '@sinclair/typebox';
import { EVENT_ID_PATTERN } from '../domain/room-settings-model.ts';

const Id = Type.String({ maxLength: 1024 });

const query = <T extends Record<string, TSchema>>(properties: T) => Type.Object(properties);
const body = <T extends Record<string, TSchema>>(properties: T) => Type.Object(properties);

export const EventQuery = query({ event_id: Id });
export const EventRequestQuery = query({ event_id: Id, request_id: Id });
/** GET /queue_num: beat=1 from a client that beats (Anteroom's waiting page): a sign of life (issue 34, presence). */
export const QueueNumQuery = query({ event_id: Id, request_id: Id, beat: Type.Optional(Type.String({ description: '1: a presence beat of a client that beats (answered no-store); other values are ignored' })) });
/** GET /stream: with the visitor's request ID, the open stream is a sign of life (issue 34, presence). */
export const StreamQuery = query({ event_id: Id, request_id: Type.Optional(Id) });

/**
 * Pages of the drawn entries (the private draw_positions): offset from 0, limit 1–5,000 (one store chunk).
 * Query values are not coerced: whole numbers as text.
 */
export const DrawPositionsQuery = query({
  event_id: Id,
  offset: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,9})$' })),
  limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$' })),
});

/** GET /draw: the whole publication, or one page of its entries (page from 1; DRAW_PAGE_ENTRIES a page). */
export const DrawQuery = query({ event_id: Id, page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })) });

/**
 * The audit log's pages: newest first, `limit` 1–1,000 (default 100), older than the sequence `before`, of one
 * room when `event_id` names it (an event ID's syntax: src/domain/room-settings-model.ts EVENT_ID_PATTERN).
 */
export const AuditQuery = query({
  limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|1000)$' })),
  before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$' })),
  event_id: Type.Optional(Type.String({ pattern: EVENT_ID_PATTERN })),
});

/** A room's report: `from`/`to` in epoch seconds (default: the last 24 hours), as JSON or CSV. */
export const ReportQuery = query({
  from: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,10})$' })),
  to: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,10})$' })),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
});

const NullableSeconds = Type.Union([Type.Integer(), Type.Null()]);
const ReportMinuteSchema = Type.Object({
  minute: Type.Integer({ description: 'Start of the minute, epoch seconds' }),
  arrivals: Type.Integer(),
  admissions: Type.Integer(),
  claims: Type.Integer(),
  leaves: Type.Integer(),
  completions: Type.Integer(),
  abandons: Type.Integer(),
  expiries: Type.Integer(),
  waiting: Type.Integer({ description: 'Waiting line at the end of the minute' }),
  prequeue: Type.Integer({ description: 'In the pre-queue (waiting for the draw, no position yet) at the end of the minute' }),
  active_sessions: Type.Integer(),
  serving_counter: Type.Integer({ description: 'The serving counter at the end of the minute' }),
  waits_measured: Type.Integer({ description: 'Visitors admitted this minute whose wait (join → admission) was measured' }),
  wait_p50_s: NullableSeconds,
  wait_p90_s: NullableSeconds,
  wait_p99_s: NullableSeconds,
  estimates_judged: Type.Integer({ description: 'Of those, the ones given a turn estimate' }),
  estimate_error_p50_s: NullableSeconds,
  estimate_error_p90_s: NullableSeconds,
  present_waiting: Type.Integer({ description: 'In line and present (seen within presence_timeout, or never beat) at the end of the minute' }),
  absent_waiting: Type.Integer({ description: 'In line and absent (beat once, not within presence_timeout) at the end of the minute' }),
  no_shows: Type.Integer({ description: 'Let in, not claimed, past their arrival window, at the end of the minute' }),
  late_arrivals: Type.Integer({ description: 'Claims this minute by visitors who had stopped counting (passed while absent, or past their arrival window)' }),
});
const ReportTotalsSchema = Type.Object({
  arrivals: Type.Integer(),
  admissions: Type.Integer(),
  claims: Type.Integer(),
  leaves: Type.Integer(),
  completions: Type.Integer(),
  abandons: Type.Integer(),
  expiries: Type.Integer(),
  peak_waiting: Type.Integer(),
  peak_waiting_minute: Type.Union([Type.Integer(), Type.Null()]),
  peak_active_sessions: Type.Integer(),
  peak_prequeue: Type.Integer({ description: 'The most people in the pre-queue at the end of a minute' }),
  peak_absent_waiting: Type.Integer({ description: 'The most people in line and absent at the end of a minute' }),
  peak_no_shows: Type.Integer({ description: 'The most no-shows at the end of a minute' }),
  late_arrivals: Type.Integer({ description: 'Late arrivals in the range' }),
  waits_measured: Type.Integer(),
  wait_p50_s: NullableSeconds,
  wait_p90_s: NullableSeconds,
  wait_p99_s: NullableSeconds,
  estimates_judged: Type.Integer(),
  estimate_error_p50_s: NullableSeconds,
  estimate_error_p90_s: NullableSeconds,
});
/** The after-event report: JSON, or CSV (the same columns, an empty cell for null) with format=csv or Accept: text/csv. */
export const ReportResponse = {
  200: {
    description: "The room's report, minute by minute",
    content: {
      'application/json': {
        schema: Type.Object({
          event_id: Type.String(),
          from: Type.Integer(),
          to: Type.Integer(),
          totals: ReportTotalsSchema,
          minutes: Type.Array(ReportMinuteSchema),
        }),
      },
      'text/csv': { schema: Type.String() },
    },
  },
};

export const EventBody = body({ event_id: Id });
export const EventRequestBody = body({ event_id: Id, request_id: Id });
/** A join: VWR's body, plus what the bot defence may ask for (docs/bots.md). */
export const JoinBody = body({
  event_id: Id,
  /** ALTCHA payload: base64 of JSON {challenge, solution}. */
  proof_of_work: Type.Optional(Type.String({ maxLength: 4096 })),
  /** Enqueue key signed by the site. */
  enqueue_key: Type.Optional(Type.String({ maxLength: 2048 })),
});

/** The hand-off (docs/gate.md#hand-off): a code for a served visitor, and its exchange by the site. */
export const HandoffCodeBody = body({ event_id: Id, request_id: Id, return_to: Type.String({ maxLength: 2048 }) });
export const HandoffBody = body({ event_id: Id, code: Type.String({ maxLength: 512 }) });

export const PrivateGenerateTokenBody = body({
  event_id: Id,
  request_id: Id,
  issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  validity_period: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000 })),
});

export const IncrementBody = body({
  event_id: Id,
  increment_by: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 }),
  /** Count only present visitors (issue 34, docs/rooms.md "Presence and the arrival window"); default false (VWR's). */
  present_only: Type.Optional(Type.Boolean()),
});

export const UpdateSessionBody = body({
  event_id: Id,
  request_id: Id,
  status: Type.Integer(),
});

// Response schemas of the hot routes: Fastify serialises them with a compiled serializer instead of
// JSON.stringify. Only fields listed here are sent, so they mirror the contract exactly.
const Pending = Type.Object({ error: Type.String() });
export const ServingResponse = { 200: Type.Object({ serving_counter: Type.Integer() }) };
export const WaitingResponse = { 200: Type.Object({ waiting_num: Type.Integer() }) };
export const JoinResponse = { 200: Type.Object({ api_request_id: Type.String() }) };
export const QueueNumResponse = {
  200: Type.Object({
    queue_number: Type.Integer(),
    entry_time: Type.Integer(),
    event_id: Type.String(),
    status: Type.Integer(),
    // Anteroom: the estimated wait in seconds [early, late], once the admission pace is known (docs/pages.md).
    wait_estimate_s: Type.Optional(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2 })),
    // Anteroom: the people still waiting ahead of this place (not those let in or who left; 0 for the next in line).
    people_ahead: Type.Optional(Type.Integer()),
  }),
  202: Pending,
};
