// The visitor journey of VWR, as a state machine per visitor driven by one timer wheel:
//
//   join (POST /assign_queue_num) → place (GET /queue_num until 200; 202 = async intake, poll again)
//   → wait (GET /serving_num every poll interval, now and then GET /waiting_num, until counter ≥ position)
//   → claim (POST /generate_token; 202 = not yet, back to waiting; every n-th visitor claims twice at once)
//   → re-claim (up to 3 times, must be byte-identical) → confirm (GET /queue_num: same position)
//   → with --session-time: stay that long, then end the session (private POST /update_session, completed)
//   → done
//
// With --abandon some visitors close the tab on the way (abandon-plan.ts: while waiting, or once let in before
// claiming) and send nothing more; with --come-back some of them return later and go on. A waiting visitor
// also asks /queue_num with its request ID and beat=1 every --presence-beat, as Anteroom's waiting page does,
// which is the sign of life the room's presence counts (docs/rooms.md).
//
// No visitor owns a loop or a timer: each answer schedules the visitor's next step on the wheel. GETs (the
// polls) and POSTs (join, claims) may go through different clients: pipelined polling connections and undici. Only
// network errors, 429 and 5xx are retried (with back-off, honouring Retry-After); any other unexpected
// status ends that visitor's journey as failed, with the reason recorded.

import type { ApiClient, Reply } from './http-client.ts';
import { parseJson } from './http-client.ts';
import type { LoadTestOptions } from './options.ts';
import { abandonPlanOf } from './abandon-plan.ts';
import { newVisitor, sameTokens, type TokenStrings, type Visitor } from './records.ts';
import { statusLabel, type Endpoint, type RunStats } from './stats.ts';
import type { TimerWheel } from './timer-wheel.ts';

const MAX_ATTEMPTS = 8;
const MAX_BACKOFF_MS = 5000;

export type JourneyOptions = Pick<
  LoadTestOptions,
  | 'eventId'
  | 'visitors'
  | 'arrivalRate'
  | 'pollIntervalMs'
  | 'reclaims'
  | 'waitingNumEvery'
  | 'doubleClaimEvery'
  | 'sessionTimeMs'
  | 'abandon'
  | 'comeBack'
  | 'comeBackAfterMs'
  | 'seed'
  | 'presenceBeatMs'
>;

/** What the visitors' GETs go through: the pipelined polling connections, or the ApiClient itself. */
export interface GetClient {
  get(path: string): Promise<Reply>;
}

export interface JourneyDeps {
  /** Joins and claims (POST). */
  api: ApiClient;
  /** The polls: /queue_num, /serving_num, /waiting_num (the pipelined connections, or `api` itself). */
  polls: GetClient;
  wheel: TimerWheel;
  stats: RunStats;
  options: JourneyOptions;
  /** A visitor learnt its position (the admission driver never moves the counter past the highest one). */
  onPlaced?: (position: number) => void;
  /** Every visitor has finished (done or failed). */
  onFinished?: () => void;
  /** Every /serving_num answer: the counter was at most `value` at `sentAt`, at least `value` at `receivedAt`. */
  onServing?: (sentAt: number, receivedAt: number, value: number) => void;
  /** Ends a visitor's session as completed (private POST /update_session); needed with a session time. */
  endSession?: (requestId: string) => Promise<Reply>;
}

function isRetryable(status: number): boolean {
  return status === 0 || status === 429 || status >= 500;
}

function snippet(reply: Reply): string {
  return `${statusLabel(reply.status)}${reply.body ? ` ${reply.body.slice(0, 120)}` : ''}`;
}

function tokensOf(body: unknown): TokenStrings | null {
  if (typeof body !== 'object' || body === null) return null;
  const { access_token, refresh_token, id_token } = body as Record<string, unknown>;
  if (typeof access_token !== 'string' || typeof refresh_token !== 'string' || typeof id_token !== 'string') return null;
  return { access_token, refresh_token, id_token };
}

/** serving_counter is a number in Anteroom and a string in VWR: accept both. */
function numberField(body: unknown, field: string): number {
  if (typeof body !== 'object' || body === null) return NaN;
  const value = (body as Record<string, unknown>)[field];
  return typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}

export class Journey {
  readonly visitors: Visitor[] = [];
  joined = 0;
  placed = 0;
  served = 0;
  finished = 0;
  failed = 0;
  /** Visitors who closed the tab and have not come back (yet). */
  away = 0;
  /** Join attempts that got no answer or a 5xx: each may have consumed a position nobody holds. */
  joinsUnanswered = 0;
  private stopped = false;
  private launched = 0;
  private readonly deps: JourneyDeps;
  private readonly polls: GetClient;
  private readonly o: JourneyOptions;
  private readonly eventQuery: string;
  private readonly eventBody: string;

  constructor(deps: JourneyDeps) {
    this.deps = deps;
    this.polls = deps.polls;
    this.o = deps.options;
    this.eventQuery = `event_id=${encodeURIComponent(this.o.eventId)}`;
    this.eventBody = JSON.stringify({ event_id: this.o.eventId });
  }

  /** Visitors placed and not yet holding a token: the tester's view of the queue. */
  get waiting(): number {
    return this.placed - this.served - this.away;
  }

  get allFinished(): boolean {
    return this.finished === this.o.visitors;
  }

  /** Starts the arrivals: visitor i joins at i / arrival-rate seconds after `startAt`. */
  start(startAt = this.deps.wheel.now()): void {
    const pump = () => {
      if (this.stopped) return;
      const elapsed = this.deps.wheel.now() - startAt;
      const due = Math.min(this.o.visitors, Math.floor((elapsed * this.o.arrivalRate) / 1000) + 1);
      while (this.launched < due) this.launch(this.launched++);
      if (this.launched < this.o.visitors) this.deps.wheel.after(this.deps.wheel.tickMs, pump);
    };
    pump();
  }

  /** Ends every journey where it stands; answers still in flight are ignored. */
  stop(): void {
    this.stopped = true;
  }

  private call(endpoint: Endpoint, method: 'GET' | 'POST', path: string, body?: string): Promise<Reply> {
    const sent = method === 'GET' ? this.polls.get(path) : this.deps.api.send(method, path, body);
    return sent.then((reply) => {
      // Requests aborted by the end of the run are not the server's errors.
      if (!this.stopped) this.deps.stats.record(endpoint, reply.status, reply.receivedAt - reply.sentAt);
      return reply;
    });
  }

  private launch(index: number): void {
    const visitor = newVisitor(index, this.deps.wheel.now());
    visitor.abandon = abandonPlanOf(this.o, index);
    this.visitors.push(visitor);
    this.join(visitor);
  }

  private retry(v: Visitor, step: (v: Visitor) => void, reply: Reply, what: string): void {
    v.attempts++;
    if (v.attempts > MAX_ATTEMPTS) {
      this.fail(v, `${what}: gave up after ${MAX_ATTEMPTS} retries (last answer ${snippet(reply)})`);
      return;
    }
    const backoff = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (v.attempts - 1)) * (0.5 + Math.random());
    this.deps.wheel.after(reply.retryAfterMs ?? backoff, () => step(v));
  }

  private fail(v: Visitor, reason: string): void {
    v.state = 'failed';
    v.failure = reason;
    this.failed++;
    this.finish();
  }

  private done(v: Visitor): void {
    v.state = 'done';
    this.finish();
  }

  private finish(): void {
    this.finished++;
    if (this.allFinished) this.deps.onFinished?.();
  }

  private readonly join = (v: Visitor): void => {
    if (this.stopped) return;
    v.joinSentAt = this.deps.wheel.now();
    this.call('assign_queue_num', 'POST', '/assign_queue_num', this.eventBody).then((reply) => {
      if (this.stopped) return;
      const requestId = reply.status === 200 ? (parseJson(reply.body) as { api_request_id?: unknown } | null)?.api_request_id : undefined;
      if (typeof requestId === 'string') {
        v.requestId = requestId;
        v.joinedAt = reply.receivedAt;
        v.lastSeenAt = reply.sentAt;
        v.state = 'placing';
        v.attempts = 0;
        this.joined++;
        this.deps.stats.joins++;
        this.place(v);
      } else if (isRetryable(reply.status)) {
        // A 503 (intake paused) is refused before any position is taken; other failures may have taken one.
        if (reply.status !== 503) this.joinsUnanswered++;
        this.retry(v, this.join, reply, 'assign_queue_num');
      } else {
        this.fail(v, `assign_queue_num answered ${snippet(reply)}`);
      }
    });
  };

  private queueNumPath(v: Visitor): string {
    // beat=1: Anteroom's page marks its polls as beats (docs/rooms.md); only such a poll counts for presence.
    const beat = this.o.presenceBeatMs > 0 ? '&beat=1' : '';
    return `/queue_num?${this.eventQuery}&request_id=${encodeURIComponent(v.requestId!)}${beat}`;
  }

  private readonly place = (v: Visitor): void => {
    if (this.stopped) return;
    this.call('queue_num', 'GET', this.queueNumPath(v)).then((reply) => {
      if (this.stopped) return;
      if (reply.status === 200) {
        const position = numberField(parseJson(reply.body), 'queue_number');
        if (!Number.isInteger(position) || position < 1) {
          this.fail(v, `queue_num answered a malformed position: ${snippet(reply)}`);
          return;
        }
        v.position = position;
        v.placedAt = reply.receivedAt;
        v.lastSeenAt = v.beatSentAt = reply.sentAt;
        v.state = 'waiting';
        v.attempts = 0;
        this.placed++;
        this.deps.onPlaced?.(position);
        this.poll(v);
      } else if (reply.status === 202) {
        // Asynchronous intake: the position does not exist yet.
        this.deps.wheel.at(reply.sentAt + this.o.pollIntervalMs, () => this.place(v));
      } else if (isRetryable(reply.status)) {
        this.retry(v, this.place, reply, 'queue_num');
      } else {
        this.fail(v, `queue_num answered ${snippet(reply)}`);
      }
    });
  };

  private readonly poll = (v: Visitor): void => {
    if (this.stopped) return;
    v.state = 'waiting';
    v.polls++;
    // Like a waiting page: how many are waiting, on arrival and then every n-th poll.
    if (this.o.waitingNumEvery > 0 && (v.polls - 1) % this.o.waitingNumEvery === 0) this.pollWaitingNum();
    // A sign of life, as the waiting page sends: /queue_num with the request ID (NaN after coming back: at once).
    if (this.o.presenceBeatMs > 0 && !(this.deps.wheel.now() - v.beatSentAt < this.o.presenceBeatMs)) this.beat(v);
    this.call('serving_num', 'GET', `/serving_num?${this.eventQuery}`).then((reply) => {
      if (this.stopped) return;
      if (reply.status === 200) {
        const counter = numberField(parseJson(reply.body), 'serving_counter');
        if (Number.isNaN(counter)) {
          this.fail(v, `serving_num answered a malformed counter: ${snippet(reply)}`);
          return;
        }
        v.attempts = 0;
        this.deps.onServing?.(reply.sentAt, reply.receivedAt, counter);
        if (counter >= v.position! && Number.isNaN(v.servedSeenAt)) v.servedSeenAt = reply.receivedAt;
        if (this.leavesNow(v, counter)) {
          this.leave(v);
        } else if (counter >= v.position!) {
          this.claim(v);
        } else {
          this.deps.wheel.at(reply.sentAt + this.o.pollIntervalMs, () => this.poll(v));
        }
      } else if (isRetryable(reply.status)) {
        this.retry(v, this.poll, reply, 'serving_num');
      } else {
        this.fail(v, `serving_num answered ${snippet(reply)}`);
      }
    });
  };

  /** --abandon: whether this answer of /serving_num is the visitor's point of leaving (abandon-plan.ts). */
  private leavesNow(v: Visitor, counter: number): boolean {
    const plan = v.abandon;
    if (plan === null || !Number.isNaN(v.leftAt)) return false;
    const distance = v.position! - counter;
    if (Number.isNaN(v.firstDistance)) v.firstDistance = distance;
    // Let in before the point of leaving while waiting: leaves then, before claiming, like the others.
    return distance <= 0 || (plan.stage === 'waiting' && distance <= plan.remainingShare * v.firstDistance);
  }

  /** Closes the tab: nothing more is sent; back after its time away, or never (finished). */
  private leave(v: Visitor): void {
    v.leftAt = this.deps.wheel.now();
    this.away++;
    const awayMs = v.abandon!.awayMs;
    if (awayMs === null) {
      v.state = 'left';
      this.finish();
      return;
    }
    v.state = 'away';
    this.deps.wheel.after(awayMs, () => {
      if (this.stopped) return;
      v.cameBackAt = this.deps.wheel.now();
      this.away--;
      v.beatSentAt = NaN;
      this.poll(v);
    });
  }

  /** The sign of life of --presence-beat: /queue_num names the visitor; the position must not have changed. */
  private beat(v: Visitor): void {
    v.beatSentAt = this.deps.wheel.now();
    void this.call('queue_num', 'GET', this.queueNumPath(v)).then((reply) => {
      if (this.stopped || reply.status !== 200) return;
      const position = numberField(parseJson(reply.body), 'queue_number');
      if (position !== v.position) (v.otherPositions ??= []).push(position);
      else v.lastSeenAt = Math.max(v.lastSeenAt, reply.sentAt);
    });
  }

  /** Load only (the answer is not used: the run's observer charts the server's count). */
  private pollWaitingNum(): void {
    void this.call('waiting_num', 'GET', `/waiting_num?${this.eventQuery}`);
  }

  private claimBody(v: Visitor): string {
    return JSON.stringify({ event_id: this.o.eventId, request_id: v.requestId });
  }

  private readonly claim = (v: Visitor): void => {
    if (this.stopped) return;
    v.state = 'claiming';
    const body = this.claimBody(v);
    // A double click on the very first claim: two claims at once must still yield one token set (VWR raced here).
    const first = v.attempts === 0 && v.refusedClaimsSentAt === null;
    const twice = first && this.o.doubleClaimEvery > 0 && v.index % this.o.doubleClaimEvery === this.o.doubleClaimEvery - 1;
    const sends = [this.call('generate_token', 'POST', '/generate_token', body)];
    if (twice) sends.push(this.call('generate_token', 'POST', '/generate_token', body));
    Promise.all(sends).then((replies) => this.onClaim(v, replies));
  };

  private onClaim(v: Visitor, replies: Reply[]): void {
    if (this.stopped) return;
    for (const reply of replies) {
      if (reply.status === 202) (v.refusedClaimsSentAt ??= []).push(reply.sentAt);
    }
    const granted = replies.filter((r) => r.status === 200).sort((a, b) => a.receivedAt - b.receivedAt);
    if (granted.length > 0) {
      const sets = granted.map((r) => tokensOf(parseJson(r.body)));
      const first = sets[0];
      if (!first || sets.some((s) => s === null)) {
        this.fail(v, `generate_token answered 200 without a token set: ${snippet(granted[0]!)}`);
        return;
      }
      for (const other of sets.slice(1)) if (!sameTokens(first, other!)) v.claimMismatches++;
      v.tokens = first;
      v.claimSentAt = granted[0]!.sentAt;
      v.tokenAt = granted[0]!.receivedAt;
      v.attempts = 0;
      this.served++;
      this.deps.stats.admissions++;
      this.afterToken(v);
      return;
    }
    const reply = replies[0]!;
    if (reply.status === 202) {
      v.attempts = 0;
      this.deps.wheel.at(reply.sentAt + this.o.pollIntervalMs, () => this.poll(v));
    } else if (isRetryable(reply.status)) {
      this.retry(v, this.claim, reply, 'generate_token');
    } else {
      this.fail(v, `generate_token answered ${snippet(reply)}`);
    }
  }

  private afterToken(v: Visitor): void {
    if (v.reclaimsDone < this.o.reclaims) {
      v.state = 'reclaiming';
      this.deps.wheel.after(0, () => this.reclaim(v));
    } else {
      v.state = 'confirming';
      this.deps.wheel.after(0, () => this.confirm(v));
    }
  }

  private readonly reclaim = (v: Visitor): void => {
    if (this.stopped) return;
    this.call('generate_token_reclaim', 'POST', '/generate_token', this.claimBody(v)).then((reply) => {
      if (this.stopped) return;
      if (reply.status === 200) {
        const tokens = tokensOf(parseJson(reply.body));
        if (!tokens || !sameTokens(v.tokens!, tokens)) v.reclaimMismatches++;
      } else if (isRetryable(reply.status)) {
        this.retry(v, this.reclaim, reply, 'generate_token (re-claim)');
        return;
      } else {
        (v.reclaimFailures ??= []).push(statusLabel(reply.status));
      }
      v.attempts = 0;
      v.reclaimsDone++;
      this.afterToken(v);
    });
  };

  /** Asks /queue_num once more at the end: a position must never change. */
  private readonly confirm = (v: Visitor): void => {
    if (this.stopped) return;
    this.call('queue_num', 'GET', this.queueNumPath(v)).then((reply) => {
      if (this.stopped) return;
      if (reply.status === 200) {
        const position = numberField(parseJson(reply.body), 'queue_number');
        if (position !== v.position) (v.otherPositions ??= []).push(position);
        v.attempts = 0;
        if (this.o.sessionTimeMs === null) {
          this.done(v);
        } else {
          v.state = 'in session';
          this.deps.wheel.after(this.o.sessionTimeMs, () => this.endSession(v));
        }
      } else if (isRetryable(reply.status)) {
        this.retry(v, this.confirm, reply, 'queue_num (confirm)');
      } else {
        this.fail(v, `queue_num (confirm) answered ${snippet(reply)}`);
      }
    });
  };

  /** The visitor leaves the site: its session ends as completed, which frees its place in an automatic room. */
  private readonly endSession = (v: Visitor): void => {
    if (this.stopped) return;
    const end = this.deps.endSession;
    if (!end) {
      this.fail(v, 'no private API to end the session with');
      return;
    }
    end(v.requestId!).then((reply) => {
      if (this.stopped) return;
      this.deps.stats.record('update_session', reply.status, reply.receivedAt - reply.sentAt);
      // An attempt without an answer may have ended the session: the place certainly ended by the first send.
      if (reply.status === 200 || isRetryable(reply.status)) v.sessionEndSentAt = Math.min(v.sessionEndSentAt, reply.sentAt);
      if (reply.status === 200 || (reply.status === 404 && v.sessionEndSentAt !== Infinity)) {
        // A 404 after an unanswered attempt: that attempt ended it ("status already set").
        this.done(v);
      } else if (isRetryable(reply.status)) {
        this.retry(v, this.endSession, reply, 'update_session');
      } else {
        this.fail(v, `update_session answered ${snippet(reply)}`);
      }
    });
  };
}
