// The correctness verdicts of a load test: functions over what was recorded (visitors, admission steps,
// the event's public key), computed after the run. Each verdict names the rule of spec/core-api.md it
// checks, passes or fails, and cites a few offending visitors. docs/loadtest.md explains each one.

import { importJWK, jwtVerify, type JWK } from 'jose';
import type { CounterBounds } from './counter-log.ts';
import type { IncrementRecord, Visitor } from './records.ts';

/** Verdicts of every run. */
export const CORE_VERDICT_NAMES = [
  'one_position_per_visitor',
  'positions_unique_gap_free',
  'fifo_admission',
  'one_token_set_per_served_visitor',
  'tokens_verify',
  'reclaims_identical',
] as const;
/** Verdicts of a run against a room that admits by itself, is paused or draws its pre-queue (room-verdicts.ts). */
export const ROOM_VERDICT_NAMES = ['admission_rate', 'admission_capacity', 'paused_holds', 'draw_order'] as const;
export const VERDICT_NAMES = [...CORE_VERDICT_NAMES, ...ROOM_VERDICT_NAMES] as const;
export type CoreVerdictName = (typeof CORE_VERDICT_NAMES)[number];
export type RoomVerdictName = (typeof ROOM_VERDICT_NAMES)[number];
export type VerdictName = (typeof VERDICT_NAMES)[number];

export interface Verdict {
  name: VerdictName;
  /** The rule, as a sentence. */
  rule: string;
  ok: boolean;
  /** What was checked and, when it failed, what went wrong. */
  detail: string;
  /** Number of offending visitors / positions / tokens. */
  failures: number;
  /** A few offending cases, for a human. */
  examples: string[];
}

export interface VerdictInput {
  eventId: string;
  visitors: readonly Visitor[];
  increments: readonly IncrementRecord[];
  /** The serving counter before the run: 0 after a reset, else what /serving_num answered. */
  initialServing: number;
  /** 1 when the event was reset before the run (positions must be exactly 1..N); null: any contiguous block. */
  expectFirstPosition: number | null;
  /** Join attempts that got no answer or a 5xx (each may hold a position no visitor knows). */
  joinsUnanswered: number;
  /** The run was stopped by --duration before every visitor finished. */
  cutShort: boolean;
  /**
   * A room that admits by itself: the counter's bounds from every /serving_num answer (nobody in the run moves
   * it, so there are no increments to bound it with).
   */
  bounds?: CounterBounds;
}

/** Offending cases a verdict cites, at most. */
export const MAX_EXAMPLES = 5;

/** A verdict from its failure count: the pass or the fail detail, and the first examples. */
export function verdict(name: VerdictName, rule: string, failures: number, examples: string[], passDetail: string, failDetail: string): Verdict {
  return { name, rule, ok: failures === 0, detail: failures === 0 ? passDetail : failDetail, failures, examples: examples.slice(0, MAX_EXAMPLES) };
}

function who(v: Visitor): string {
  return `visitor #${v.index + 1}${v.requestId ? ` (${v.requestId})` : ''}`;
}

/** A visitor whose journey was cut by --duration in the middle of a step is not a failure of the server. */
function unfinished(v: Visitor, input: VerdictInput): boolean {
  return input.cutShort && v.state !== 'done' && v.state !== 'failed';
}

/** Every visitor who joined was given one position, which never changed (queue_num at the end agrees). */
export function onePositionPerVisitor(input: VerdictInput): Verdict {
  const examples: string[] = [];
  let failures = 0;
  let joined = 0;
  for (const v of input.visitors) {
    if (v.requestId === null) continue;
    joined++;
    if (v.position === null) {
      if (unfinished(v, input)) continue;
      failures++;
      examples.push(`${who(v)} joined but was never placed${v.failure ? `: ${v.failure}` : ''}`);
    } else if (v.otherPositions) {
      failures++;
      examples.push(`${who(v)} was told position ${v.position}, later ${v.otherPositions.join(', ')}`);
    }
  }
  return verdict(
    'one_position_per_visitor',
    'Every visitor who joined got exactly one position, and /queue_num kept answering it.',
    failures,
    examples,
    `${joined} visitors joined; each got one position that stayed the same.`,
    `${failures} of ${joined} visitors did not keep exactly one position.`,
  );
}

/** Positions are unique and form one block without holes (exactly 1..N after a reset). */
export function positionsUniqueGapFree(input: VerdictInput): Verdict {
  const placed = input.visitors.filter((v) => v.position !== null);
  const examples: string[] = [];
  if (placed.length === 0) {
    return verdict('positions_unique_gap_free', 'Positions are unique and gap-free.', 0, [], 'No visitor was placed.', '');
  }
  const byPosition = [...placed].sort((a, b) => a.position! - b.position!);
  let duplicates = 0;
  let gaps = 0;
  for (let i = 1; i < byPosition.length; i++) {
    const prev = byPosition[i - 1]!;
    const cur = byPosition[i]!;
    if (cur.position === prev.position) {
      duplicates++;
      examples.push(`position ${cur.position} was given to ${who(prev)} and ${who(cur)}`);
    } else if (cur.position! > prev.position! + 1) {
      const missing = cur.position! - prev.position! - 1;
      gaps += missing;
      examples.push(missing === 1 ? `position ${prev.position! + 1} belongs to no visitor` : `positions ${prev.position! + 1}–${cur.position! - 1} belong to no visitor`);
    }
  }
  const first = byPosition[0]!.position!;
  const last = byPosition[byPosition.length - 1]!.position!;
  let wrongStart = 0;
  if (input.expectFirstPosition !== null && first !== input.expectFirstPosition) {
    wrongStart = 1;
    examples.unshift(`the first position is ${first}, expected ${input.expectFirstPosition} after the reset`);
  }
  // A run cut short leaves joins and placements in flight: their positions exist but were never learnt.
  const inFlight = input.visitors.filter((v) => v.position === null && unfinished(v, input)).length;
  const unexplainedGaps = gaps > inFlight ? gaps : 0;
  const failures = duplicates + unexplainedGaps + wrongStart;
  const unplaced = input.visitors.filter((v) => v.requestId !== null && v.position === null).length;
  const excuses: string[] = [];
  if (gaps > 0 && input.joinsUnanswered > 0) excuses.push(`${input.joinsUnanswered} join requests went unanswered or failed with 5xx and may hold the missing positions`);
  if (gaps > 0 && unplaced > 0) excuses.push(`${unplaced} joined visitors were never placed`);
  const pass =
    gaps === 0
      ? `${placed.length} positions ${first}..${last}, all distinct, none missing.`
      : `${placed.length} positions in ${first}..${last}, all distinct; the ${gaps} positions not seen can belong to the ` +
        `${inFlight} visitors whose join or placement was still in flight when the run was cut short.`;
  return verdict(
    'positions_unique_gap_free',
    'Positions are unique and gap-free: one block of consecutive numbers, each held by one visitor.',
    failures,
    examples.filter((e) => unexplainedGaps > 0 || !e.includes('belong')),
    pass,
    `${duplicates} duplicate positions, ${unexplainedGaps} missing positions in ${first}..${last}` +
      `${wrongStart ? ', wrong first position' : ''}${excuses.length ? ` (${excuses.join('; ')})` : ''}.`,
  );
}

/**
 * FIFO admission, relative to the serving counter (visitors poll independently, so the order in which tokens
 * are claimed is not itself FIFO; what the server controls is *who may* claim):
 *  (a) never ahead — a token was issued to position P only if P ≤ the highest value the counter could have
 *      had when the token was answered: the result of the last increment sent before that moment (an
 *      increment that got no answer counts as applied);
 *  (b) never skipped — no claim for position P was answered 202 "not being served yet" if it was sent after
 *      an increment had been answered with a counter ≥ P.
 */
export function fifoAdmission(input: VerdictInput): Verdict {
  const bounds = input.bounds ?? boundsFromIncrements(input);
  const examples: string[] = [];
  let ahead = 0;
  let skipped = 0;
  let checked = 0;
  for (const v of input.visitors) {
    if (v.position === null) continue;
    if (v.tokens) {
      checked++;
      const bound = bounds.upperAt(v.tokenAt);
      if (v.position > bound) {
        ahead++;
        examples.push(`${who(v)} at position ${v.position} got a token at ${(v.tokenAt / 1000).toFixed(3)} s while the counter was at most ${bound}`);
      }
    }
    for (const t of v.refusedClaimsSentAt ?? []) {
      const reached = bounds.lowerAt(t);
      if (v.position <= reached) {
        skipped++;
        examples.push(`${who(v)} at position ${v.position} was refused at ${(t / 1000).toFixed(3)} s although the counter had reached ${reached}`);
      }
    }
  }
  return verdict(
    'fifo_admission',
    'Admission is FIFO: a position is let in only once the serving counter reaches it, and never refused after.',
    ahead + skipped,
    examples,
    `${checked} token sets issued, none ahead of the serving counter; no claim refused once the counter had reached it.`,
    `${ahead} token sets issued ahead of the serving counter; ${skipped} claims refused although the counter had reached them.`,
  );
}

/** The counter's bounds from the admission driver's increments: upper from what was sent, lower from what was answered. */
function boundsFromIncrements(input: VerdictInput): CounterBounds {
  const incs = [...input.increments].sort((a, b) => a.sentAt - b.sentAt);
  // upper[i]: highest counter possible once increment i was sent (running max; an unanswered one applied).
  const sentAt: number[] = [];
  const upper: number[] = [];
  let high = input.initialServing;
  let known = input.initialServing;
  for (const inc of incs) {
    const value = inc.servingAfter ?? known + inc.by;
    if (inc.servingAfter !== null) known = inc.servingAfter;
    high = Math.max(high, value, known);
    sentAt.push(inc.sentAt);
    upper.push(high);
  }
  // lower: counters confirmed by an answer, by answer time.
  const acked = incs.filter((i) => i.servingAfter !== null && !Number.isNaN(i.receivedAt)).sort((a, b) => a.receivedAt - b.receivedAt);
  const ackedAt = acked.map((i) => i.receivedAt);
  const lowerValues: number[] = [];
  let low = input.initialServing;
  for (const inc of acked) {
    low = Math.max(low, inc.servingAfter!);
    lowerValues.push(low);
  }
  const upperAt = (t: number): number => {
    const i = lastAtOrBefore(sentAt, t);
    return i < 0 ? input.initialServing : upper[i]!;
  };
  const lowerAt = (t: number): number => {
    const i = lastAtOrBefore(ackedAt, t);
    return i < 0 ? input.initialServing : lowerValues[i]!;
  };

  return { upperAt, lowerAt };
}

/** Last index i with times[i] ≤ t in an ascending array, or -1. */
function lastAtOrBefore(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/**
 * Every visitor the counter reached ended with one token set: concurrent first claims got the same set,
 * no two visitors share a set, and nobody whose position was served is left without one.
 */
export function oneTokenSetPerServedVisitor(input: VerdictInput): Verdict {
  const finalCounter = input.increments.reduce((max, i) => Math.max(max, i.servingAfter ?? max), input.initialServing);
  const examples: string[] = [];
  let failures = 0;
  let served = 0;
  const owners = new Map<string, Visitor>();
  for (const v of input.visitors) {
    if (v.tokens) {
      served++;
      if (v.claimMismatches > 0) {
        failures++;
        examples.push(`${who(v)} got two different token sets from concurrent first claims`);
      }
      const owner = owners.get(v.tokens.access_token);
      if (owner) {
        failures++;
        examples.push(`${who(v)} got the same token set as ${who(owner)}`);
      } else {
        owners.set(v.tokens.access_token, v);
      }
    } else if (v.position !== null && v.position <= finalCounter && !unfinished(v, input) && v.state !== 'left' && v.state !== 'away') {
      // (A visitor who closed the tab claims nothing: --abandon.)
      failures++;
      examples.push(`${who(v)} at position ${v.position} was served (counter ${finalCounter}) but has no token${v.failure ? `: ${v.failure}` : ''}`);
    }
  }
  return verdict(
    'one_token_set_per_served_visitor',
    'Every visitor served got exactly one token set of its own.',
    failures,
    examples,
    `${served} served visitors, each with one token set of its own.`,
    `${failures} served visitors without exactly one token set of their own.`,
  );
}

/** Re-claims of an issued token set answer 200 with byte-identical tokens. */
export function reclaimsIdentical(input: VerdictInput): Verdict {
  const examples: string[] = [];
  let failures = 0;
  let reclaims = 0;
  for (const v of input.visitors) {
    reclaims += v.reclaimsDone;
    if (v.reclaimMismatches > 0) {
      failures++;
      examples.push(`${who(v)}: ${v.reclaimMismatches} re-claims returned different tokens`);
    }
    if (v.reclaimFailures) {
      failures++;
      examples.push(`${who(v)}: re-claims answered ${v.reclaimFailures.join(', ')}`);
    }
  }
  return verdict(
    'reclaims_identical',
    'Re-claiming a token set returns the same tokens, byte for byte.',
    failures,
    examples,
    `${reclaims} re-claims, all byte-identical to the first claim.`,
    `${failures} visitors got a different answer on re-claim.`,
  );
}

const TOKEN_FIELDS = [
  ['access_token', 'access'],
  ['refresh_token', 'refresh'],
  ['id_token', 'id'],
] as const;

/**
 * Every token verifies against the event's /public_key (its algorithm and kid) and carries the visitor's claims:
 * aud = event, sub = request ID, queue_position = position, token_use matching the field it came in.
 * `publicKey` is the JWK /public_key answered, or an error message when it could not be fetched.
 */
export async function tokensVerify(input: VerdictInput, publicKey: JWK | string): Promise<Verdict> {
  const rule = 'Every token verifies against /public_key and names its visitor (aud, sub, queue_position, token_use).';
  const withTokens = input.visitors.filter((v) => v.tokens !== null);
  if (typeof publicKey === 'string') {
    return verdict('tokens_verify', rule, Math.max(1, withTokens.length * 3), [publicKey], '', `Could not get the public key: ${publicKey}`);
  }
  const algorithm = typeof publicKey.alg === 'string' ? publicKey.alg : 'RS256';
  const key = await importJWK(publicKey, algorithm);
  const examples: string[] = [];
  let failures = 0;
  const check = async (v: Visitor, field: (typeof TOKEN_FIELDS)[number]) => {
    const [name, use] = field;
    try {
      const { payload, protectedHeader } = await jwtVerify(v.tokens![name], key, {
        algorithms: [algorithm],
        audience: input.eventId,
        subject: v.requestId!,
        clockTolerance: 60,
      });
      const problems: string[] = [];
      if (publicKey.kid !== undefined && protectedHeader.kid !== publicKey.kid) problems.push(`kid ${protectedHeader.kid} ≠ ${publicKey.kid}`);
      if (payload.queue_position !== v.position) problems.push(`queue_position ${String(payload.queue_position)} ≠ ${v.position}`);
      if (payload.token_use !== use) problems.push(`token_use ${String(payload.token_use)} ≠ ${use}`);
      if (problems.length > 0) throw new Error(problems.join(', '));
    } catch (error) {
      failures++;
      examples.push(`${who(v)} ${name}: ${(error as Error).message}`);
    }
  };
  // WebCrypto verifies off the main thread: keep a bounded number in flight.
  const jobs = withTokens.flatMap((v) => TOKEN_FIELDS.map((f) => () => check(v, f)));
  for (let i = 0; i < jobs.length; i += 256) await Promise.all(jobs.slice(i, i + 256).map((job) => job()));
  return verdict(
    'tokens_verify',
    rule,
    failures,
    examples,
    `${jobs.length} tokens of ${withTokens.length} visitors verified against key ${publicKey.kid ?? '(no kid)'}.`,
    `${failures} of ${jobs.length} tokens failed verification.`,
  );
}

export async function computeVerdicts(input: VerdictInput, publicKey: JWK | string): Promise<Verdict[]> {
  return [
    onePositionPerVisitor(input),
    positionsUniqueGapFree(input),
    fifoAdmission(input),
    oneTokenSetPerServedVisitor(input),
    await tokensVerify(input, publicKey),
    reclaimsIdentical(input),
  ];
}
