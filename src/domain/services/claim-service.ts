// Claims: what a served visitor gets — the token set (generate_token, issued once, re-claimed without signing
// again), the room's public keys, queue_pos_expiry, the hand-off without a gate (a one-time code for the site,
// ../handoff.ts), and the OpenID Connect binding of an authorization request to a position. Sealed: the public
// routes, the gate, src/oidc and the private API call these methods and never reach the store or the keys.

import type { BotDefence } from '../bot-defence.ts';
import { ClaimCache, keptClaimBody, type ClaimStamp } from '../claim-cache.ts';
import { decideClaim, decideExpiry, type ClaimDecision } from '../claim-decision.ts';
import { newTokenRecord, sameTokenSet, signaturesOf, type TokenRecord } from '../claims.ts';
import { Errors, Pending } from '../errors.ts';
import { allowedReturnUrl, handoffLocation, handoffStoreName, HANDOFF_CODE_TTL_SEC, HANDOFF_UNUSED, newHandoffCode, readHandoffCode } from '../handoff.ts';
import { isRequestId, newRequestId } from '../ids.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { AuthorizationStore, QueueStore, SecretStore } from '../ports/store.ts';
import type { PublicJwk, SigningKeys, TokenSet, TokenSigning } from '../ports/tokens.ts';
import type { RoomSettings } from '../room-settings.ts';
import type { PresenceTracker } from '../presence.ts';
import type { WaitEstimates } from '../wait-estimates.ts';
import type { WaitTally } from '../wait-histogram.ts';
import { ok, type Answer, type RoomContext } from './room-context.ts';

export interface TokenResponse extends TokenSet {
  token_type: 'Bearer';
  expires_in: number;
}

export interface TokenOverrides {
  issuer?: string | undefined;
  validityPeriod?: number | undefined;
  /** OpenID Connect nonce for the id token. */
  nonce?: string | undefined;
}

export type ClaimStoreUsed = Pick<QueueStore, 'getClaimContext' | 'issueTokenIfAbsent' | 'peekCounters' | 'getCounters' | 'confirmTokenSet'> &
  Pick<SecretStore, 'claimSecret' | 'replaceSecret'> &
  AuthorizationStore;

export interface ClaimServiceDeps {
  store: ClaimStoreUsed;
  context: RoomContext;
  keys: SigningKeys;
  signer: TokenSigning;
  events: EventPublisher;
  botDefence: BotDefence;
  estimates: WaitEstimates;
  /** Told of each first claim (../presence.ts): late arrivals and no-shows are counted from it (issue 34). */
  presence: Pick<PresenceTracker, 'claimed'>;
  /** Where each admitted visitor's wait is tallied; undefined: waits are not recorded (history off). */
  waitTally: WaitTally | undefined;
  /** Issuer used when an event has none configured: the server's public base URL (known once listening). */
  defaultIssuer: () => string;
}

export class ClaimService {
  private readonly store: ClaimStoreUsed;
  private readonly context: RoomContext;
  private readonly keys: SigningKeys;
  private readonly signer: TokenSigning;
  private readonly events: EventPublisher;
  private readonly botDefence: BotDefence;
  private readonly estimates: WaitEstimates;
  private readonly waitTally: WaitTally | undefined;
  private readonly defaultIssuer: () => string;

  private readonly presence: Pick<PresenceTracker, 'claimed'>;
  /** Token sets answered or issued, for re-claims from memory (../claim-cache.ts); none where the store cannot confirm them. */
  private readonly kept = new ClaimCache();

  constructor(deps: ClaimServiceDeps) {
    this.store = deps.store;
    this.presence = deps.presence;
    this.context = deps.context;
    this.keys = deps.keys;
    this.signer = deps.signer;
    this.events = deps.events;
    this.botDefence = deps.botDefence;
    this.estimates = deps.estimates;
    this.waitTally = deps.waitTally;
    this.defaultIssuer = deps.defaultIssuer;
    // A room made again under a removed room's ID may start at generation 0 again (SQLite): its kept sets go.
    this.context.catalog.onChange((change) => {
      if (change.kind === 'removed') this.kept.forgetRoom(change.eventId);
    });
  }

  async publicKey(eventId: unknown): Promise<Answer<PublicJwk>> {
    const event = this.context.event(eventId, Errors.unknownEventKey);
    return ok((await this.keys.current(event.event_id, event.signing_algorithm)).publicJwk);
  }

  /** Every public key of the event, as a JWKS. */
  async jwks(eventId: unknown): Promise<Answer<{ keys: PublicJwk[] }>> {
    const event = this.context.event(eventId, Errors.unknownEventKey);
    return ok({ keys: (await this.keys.all(event.event_id)).map((k) => k.publicJwk) });
  }

  /** Whether re-claims can be answered from memory here (the store confirms kept sets: SQLite, Redis). */
  get answersReclaimsFromMemory(): boolean {
    return this.store.confirmTokenSet !== undefined && this.store.peekCounters !== undefined;
  }

  /**
   * A re-claim's 200 body (POST /generate_token of `requestId`, lowercase) from a token set kept in memory, as the
   * ordinary path would answer it now; undefined when that cannot be told here (no entry, the counters not in
   * memory, anything that may have changed the decision: ../claim-cache.ts). A promise where the store confirms
   * the set first (Redis); on SQLite the answer comes at once.
   */
  reclaimInMemory(eventId: string, requestId: string): string | Promise<string | undefined> | undefined {
    const confirm = this.store.confirmTokenSet;
    if (!confirm || !this.store.peekCounters || !this.context.catalog.get(eventId)) return undefined;
    const counters = this.store.peekCounters(eventId);
    const kept = counters && this.kept.entry(eventId, requestId, counters);
    if (!kept) return undefined;
    const confirmed = confirm.call(this.store, eventId, kept.record);
    if (confirmed === true) return keptClaimBody(kept, this.context.now());
    return confirmed.then((still) => {
      if (still) return keptClaimBody(kept, this.context.now());
      this.kept.drop(eventId, requestId);
      return undefined;
    });
  }

  async generateToken(eventId: unknown, requestId: unknown, overrides: TokenOverrides = {}): Promise<Answer<TokenResponse>> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    const now = this.context.now();
    // The counters a set answered below is kept with, read before the store is (../claim-cache.ts).
    const stamp = this.store.confirmTokenSet && this.store.peekCounters
      ? this.kept.stamp(this.store.peekCounters(event.event_id) ?? (await this.store.getCounters(event.event_id)))
      : undefined;
    const [ctx, room] = await Promise.all([this.store.getClaimContext(event.event_id, id), this.context.claimRoom(event)]);
    const decision = decideClaim(ctx, this.context.expiryRule(event), now, room);
    switch (decision.kind) {
      case 'no-position':
        // A parked place (infinite queue) is never served, like a place in the pre-queue before the draw.
        if (this.botDefence.parkedPlace(event, id) || (await this.context.waitsForDraw(event, id))) return Pending.notServedYet;
        throw Errors.invalidRequestId();
      case 'position-left':
        throw Errors.queuePositionLeft();
      case 'not-served-yet':
        return Pending.notServedYet;
      case 'session-closed':
        throw Errors.tokenSessionClosed();
      case 'position-expired':
        throw Errors.queuePositionExpired();
      case 'reissue':
        return ok(this.keep(event.event_id, decision.record, await this.tokenResponse(event.event_id, decision.record, now), stamp));
      case 'issue': {
        const answer = await this.issue(event, id, decision.position, now, overrides, stamp);
        if (answer.issued) this.presence.claimed(event, decision.position, ctx?.servedAt ?? null);
        if (answer.issued && this.waitTally) {
          // The wait it had (join → admission; the claim when the admission time is unknown), against the
          // estimate it was given (when this node gave it one): the room's wait histogram of that minute.
          const admittedAt = Math.max(ctx?.servedAt ?? now, ctx?.entryTime ?? 0);
          const error = this.estimates.admitted(event.event_id, id, admittedAt * 1000);
          this.waitTally.add(event.event_id, admittedAt, admittedAt - (ctx?.entryTime ?? admittedAt), error);
        }
        return ok(answer.response);
      }
    }
  }

  private async issue(
    event: RoomSettings,
    requestId: string,
    position: number,
    now: number,
    overrides: TokenOverrides,
    stamp: ClaimStamp | undefined,
  ): Promise<{ response: TokenResponse; issued: boolean }> {
    const key = await this.keys.current(event.event_id, event.signing_algorithm);
    const record = newTokenRecord({
      requestId,
      position,
      now,
      validityPeriod: overrides.validityPeriod ?? event.validity_period,
      issuer: overrides.issuer ?? event.issuer ?? this.defaultIssuer(),
      kid: key.kid,
      nonce: overrides.nonce,
    });
    // Signed before it is stored, so the signatures are stored with the record in the same atomic write and a
    // re-claim never signs again (issue 15). A claim refused below wasted one signing: rare.
    const signed = await this.signer.signNew(event.event_id, record);
    const stored: TokenRecord = { ...record, signatures: signaturesOf(signed) };
    const result = await this.store.issueTokenIfAbsent(event.event_id, stored);
    switch (result.outcome) {
      case 'no-position':
        throw Errors.invalidRequestId();
      case 'expired':
        throw Errors.queuePositionExpired();
      case 'left':
        // The visitor left between the claim context read and this atomic issue.
        throw Errors.queuePositionLeft();
      case 'existing':
        // A concurrent first claim won: answer with its tokens (same rules as a re-claim).
        if (result.record.status !== 0) throw Errors.tokenSessionClosed();
        return { response: this.keep(event.event_id, result.record, await this.tokenResponse(event.event_id, result.record, now), stamp), issued: false };
      case 'issued': {
        // The set just signed, unless the store's record differs in anything the tokens are built from.
        const response = sameTokenSet(result.record, stored)
          ? tokenAnswer(signed, stored, now)
          : await this.tokenResponse(event.event_id, result.record, now);
        this.events.publish('token_generated', { event_id: event.event_id, request_id: requestId });
        return { response: this.keep(event.event_id, result.record, response, stamp), issued: true };
      }
    }
  }

  /**
   * Keeps the answer of the open set `record` for re-claims from memory (`stamp`: taken before it was read or
   * written). Whatever door issued it, a re-claim answers the stored set as it is (overrides apply to new sets).
   */
  private keep(eventId: string, record: TokenRecord, response: TokenResponse, stamp: ClaimStamp | undefined): TokenResponse {
    if (stamp) this.kept.remember(eventId, record, response, stamp);
    return response;
  }

  private async tokenResponse(eventId: string, record: TokenRecord, now: number): Promise<TokenResponse> {
    return tokenAnswer(await this.signer.sign(eventId, record), record, now);
  }

  async queuePosExpiry(eventId: unknown, requestId: unknown): Promise<Answer<{ expires_in: number }>> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    const ctx = await this.store.getClaimContext(event.event_id, id);
    const decision = decideExpiry(ctx, this.context.expiryRule(event), this.context.now());
    switch (decision.kind) {
      case 'no-position':
        // Waiting for the draw, or parked, is not being served yet: answered as for a position not reached.
        if (this.botDefence.parkedPlace(event, id) || (await this.context.waitsForDraw(event, id))) {
          return event.enable_queue_position_expiry ? Pending.notServedYet : Pending.expiryNotEnabled;
        }
        throw Errors.invalidRequestId();
      case 'position-left':
        throw Errors.queuePositionLeft();
      case 'expiry-not-enabled':
        return Pending.expiryNotEnabled;
      case 'not-served-yet':
        return Pending.notServedYet;
      case 'position-expired':
        throw Errors.queuePositionExpired();
      case 'expires-in':
        return ok({ expires_in: decision.seconds });
    }
  }

  // ---- the hand-off without a gate (src/domain/handoff.ts) ----

  /**
   * POST /handoff_code: for a served visitor, a one-time code and where to send them — `return_to` with
   * `anteroom_handoff=<code>` — when `return_to` is on one of the room's allowed_return_origins (else 400).
   * Not served yet → 202, as generate_token; a place that cannot be served (expired, left, closed) → its error.
   */
  async handoffCode(eventId: unknown, requestId: unknown, returnTo: unknown): Promise<Answer<{ location: string; expires_in: number }>> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    const url = allowedReturnUrl(returnTo, event.allowed_return_origins);
    if (!url) throw Errors.returnToNotAllowed();
    // The same rules as a claim: only a visitor generate_token would serve gets a code.
    const claim = await this.generateToken(event.event_id, id);
    if (claim.status === 202) return claim;
    const made = newHandoffCode(event.event_id, id, this.context.now());
    await this.store.claimSecret(made.storeName, HANDOFF_UNUSED);
    return ok({ location: handoffLocation(url, made.code), expires_in: HANDOFF_CODE_TTL_SEC });
  }

  /** POST /handoff: the token set for a code, exactly once (a second exchange → 410; unknown or stale → 404). */
  async exchangeHandoff(eventId: unknown, code: unknown): Promise<Answer<TokenResponse>> {
    const event = this.context.event(eventId);
    const named = readHandoffCode(code);
    if (!named || !isRequestId(named.requestId) || this.context.now() - named.createdSec > HANDOFF_CODE_TTL_SEC) {
      throw Errors.invalidHandoffCode();
    }
    const spent = `used:${newRequestId()}`;
    const after = await this.store.replaceSecret(handoffStoreName(event.event_id, code as string), HANDOFF_UNUSED, spent);
    if (after === null) throw Errors.invalidHandoffCode();
    if (after !== spent) throw Errors.handoffCodeUsed();
    return this.generateToken(event.event_id, named.requestId);
  }

  // ---- OpenID Connect (src/oidc) ----

  /**
   * What generate_token would decide now for this visitor, without issuing anything (the OpenID Connect login
   * page asks before it sends the visitor back to the relying party). Unknown room → 400.
   */
  async claimReadiness(eventId: unknown, requestId: string): Promise<ClaimDecision['kind']> {
    const event = this.context.event(eventId, Errors.invalidEventOrRequestId);
    const [ctx, room] = await Promise.all([this.store.getClaimContext(event.event_id, requestId), this.context.claimRoom(event)]);
    return decideClaim(ctx, this.context.expiryRule(event), this.context.now(), room).kind;
  }

  /**
   * Binds an OpenID Connect authorization request (opaque text) to a visitor's position; false, storing
   * nothing, when the request ID has no position.
   */
  bindAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.store.saveAuthorization(eventId, requestId, authorization);
  }

  /** The authorization request bound to a visitor's position, or null. */
  boundAuthorization(eventId: string, requestId: string): Promise<string | null> {
    return this.store.getAuthorization(eventId, requestId);
  }
}

/** The answer to a claim: the set, and how long it stays valid (never more than its validity, whatever the clock did). */
function tokenAnswer(tokens: TokenSet, record: TokenRecord, now: number): TokenResponse {
  return { ...tokens, token_type: 'Bearer', expires_in: Math.min(record.exp - record.iat, Math.max(0, record.exp - now)) };
}
