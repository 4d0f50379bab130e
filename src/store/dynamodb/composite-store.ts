// The store of the AWS deployment: Redis (ElastiCache) keeps counters, positions, serving history, expiry
// and locks — everything that must be one atomic step under a surge — and DynamoDB keeps the token records
// and sessions (./token-table.ts), as VWR did. Signing keys live wherever `keys` says (Secrets Manager on
// AWS, see src/aws/secrets-key-store.ts; Redis by default).
//
// One operation cannot be atomic across two stores, so each one that touches both is ordered so that a
// crash between its two steps leaves a state the next call completes:
//
// issueTokenIfAbsent
//   1. Redis (claimTokenPosition.lua), atomic with the expiry job: the position exists and is not expired;
//      it is marked claimed (the expiry job never expires it afterwards) and counted in `tokens` — once per
//      position, however often this step runs.
//   2. DynamoDB conditional put: the single point where a token set is created. Of two concurrent first
//      claims one put succeeds; the other reads the winner's record and answers it ("existing").
//   Crash between 1 and 2: the position is claimed and counted but no record exists. The visitor's retry of
//   generate_token repeats step 1 (a no-op) and creates the record in step 2. If the visitor never comes
//   back, `tokens` counts one token set that does not exist — the same effect on waiting_num as a visitor
//   who claimed and left, and the position stays unexpired, so the expiry job cannot double count it.
//
// closeSession
//   1. DynamoDB conditional update (open → closed, this reset generation): decides, once.
//   2. Redis (countClosedSession.lua) counts it in completed/abandoned, once per request ID.
//   Crash between 1 and 2: the next update_session for that ID answers 404 (contract: already closed) and
//   repeats step 2, which counts the session now — the count is repaired by the first retry.
//
// renewSession (the gate's shared "last seen")
//   DynamoDB says whether the token set exists and is open; Redis keeps the last seen (renewSession.lua,
//   given the iat). An idle session is closed with closeSession above, so of two nodes ending it at once one
//   counts it. A touch racing that close can record a last seen for a session just closed: harmless.
//
// resetEvent
//   Redis resets atomically and bumps the event's reset generation; token records carry the generation they
//   were issued in, and every read ignores records of an older one (DynamoDB TTL deletes them later). A
//   request straddling the reset either claimed in Redis before it (its record is of the old generation and
//   never seen again) or finds no position after it.
//
// Rooms at runtime (putRoom, getRoom, listRooms, roomsVersion, deleteRoomSettings, deleteRoomData) are
// Redis's, forwarded unchanged. deleteRoomData deletes the room's Redis data and bumps its reset generation
// as a reset does (deleteRoomData.lua); the room's token records stay in DynamoDB until their TTL (purge_at) deletes them —
// a room created again under the same ID reads only records of its own, newer generation, and deleting
// records one by one could take longer than any request may. Signing keys kept outside Redis (`keys`:
// Secrets Manager on AWS) are not deleted: a room created again there signs with the key it had.

import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import type {
  AdmissionSnapshot,
  ClaimContext,
  IssueResult,
  SessionRenewal,
  SigningKeyStore,
  StoredSigningKey,
} from '../../domain/ports/store.ts';
import { ForwardingStore } from '../forwarding-store.ts';
import type { RedisStore } from '../redis/redis-store.ts';
import type { TokenTable } from './token-table.ts';

export interface CompositeStoreOptions {
  redis: RedisStore;
  tokens: TokenTable;
  /** Default: the Redis store. */
  keys?: SigningKeyStore;
  /** Ping checks DynamoDB too when given (a cheap call; e.g. DescribeTable). */
  pingTokens?: () => Promise<void>;
}

/** Everything not overridden here is Redis's (the forwarding base). */
export class CompositeStore extends ForwardingStore {
  private readonly redis: RedisStore;
  private readonly tokens: TokenTable;
  private readonly keys: SigningKeyStore;
  private readonly pingTokens: (() => Promise<void>) | undefined;

  constructor(options: CompositeStoreOptions) {
    super(options.redis, `${options.redis.description} + dynamodb`);
    this.redis = options.redis;
    this.tokens = options.tokens;
    this.keys = options.keys ?? options.redis;
    this.pingTokens = options.pingTokens;
  }

  override async ping(): Promise<void> {
    await Promise.all([this.redis.ping(), this.pingTokens?.()]);
  }









  override async getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    // Three independent reads at once: one round trip of latency.
    const [ctx, gen, stored] = await Promise.all([
      this.redis.getClaimContext(eventId, requestId),
      this.redis.resetGeneration(eventId),
      this.tokens.get(eventId, requestId),
    ]);
    if (!ctx) return null;
    const token = stored && stored.gen === gen && stored.record.position === ctx.position ? stored.record : null;
    return { ...ctx, token };
  }

  override async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    const claim = await this.redis.claimTokenPosition(eventId, record.requestId);
    if (claim.outcome !== 'claimed') return { outcome: claim.outcome };
    const issued: TokenRecord = { ...record, position: claim.position, status: 0 };
    const put = await this.tokens.putIfAbsent(eventId, claim.generation, issued);
    if (put.outcome === 'created') return { outcome: 'issued', record: issued };
    // A record of a newer generation: the event was reset after our claim, so our position is gone.
    if (put.stored.gen !== claim.generation) return { outcome: 'no-position' };
    return { outcome: 'existing', record: put.stored.record };
  }

  override async closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    const gen = await this.redis.resetGeneration(eventId);
    const result = await this.tokens.close(eventId, gen, requestId, status);
    switch (result.outcome) {
      case 'closed':
        await this.redis.countClosedSession(eventId, requestId, status);
        return true;
      case 'already-closed':
        // Repairs the count if a crash came between the update and the count (idempotent otherwise).
        await this.redis.countClosedSession(eventId, requestId, result.status);
        return false;
      case 'missing':
        return false;
    }
  }

  override async renewSession(
    eventId: string,
    requestId: string,
    nowMs: number,
    idleBeforeMs: number | null,
    touch: boolean,
  ): Promise<SessionRenewal> {
    const [gen, stored] = await Promise.all([this.redis.resetGeneration(eventId), this.tokens.get(eventId, requestId)]);
    if (!stored || stored.gen !== gen) return { outcome: 'no-session' };
    if (stored.record.status !== 0) return { outcome: 'closed' };
    const seen = await this.redis.renewLastSeen(eventId, requestId, nowMs, idleBeforeMs, touch, stored.record.iat * 1000);
    if (seen.outcome === 'open') return seen;
    return (await this.closeSession(eventId, requestId, -1)) ? { outcome: 'ended' } : { outcome: 'closed' };
  }

  override async countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.tokens.countActive(eventId, await this.redis.resetGeneration(eventId), now);
  }

  override async listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    return this.tokens.listExpired(eventId, await this.redis.resetGeneration(eventId), now, limit);
  }



  // ---- leaving the queue and automatic admission: Redis's (the forwarding base), except active sessions ----

  /**
   * Redis's snapshot with the active sessions counted in DynamoDB (Redis holds no open sessions here). The two
   * reads are not one instant; automatic admission tolerates that (see src/domain/admission/automatic.ts).
   */
  override async getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    const [snapshot, activeSessions] = await Promise.all([
      this.redis.getAdmissionSnapshot(eventId, now, windowStart),
      this.countActiveTokens(eventId, now),
    ]);
    return { ...snapshot, activeSessions };
  }

  override getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return this.keys.getSigningKeys(eventId);
  }

  override addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    return this.keys.addSigningKeyIfNone(eventId, key);
  }





}
