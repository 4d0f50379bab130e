// Token records and sessions in one DynamoDB table (the AWS deployment's token store, as VWR kept its tokens
// in DynamoDB). Used by the composite store (./composite-store.ts): Redis decides, DynamoDB keeps the records.
//
// Table layout (the CDK stack in deploy/aws creates exactly this; tokenTableDefinition() below is the
// single description both the stack and the tests use):
//   partition key request_id (S), sort key event_id (S) — request IDs are random UUIDs, so writes spread over
//   every partition however popular one event is.
//   Attributes: position, iat, nbf, exp, status (0 open, 1 completed, -1 abandoned) (N); iss, kid, nonce? (S);
//   gen (N) the event's reset generation when issued; event_gen (S) "<event ID>#<gen>"; exp_pos (S)
//   "<exp, 12 digits>#<position, 12 digits>"; purge_at (N) the TTL attribute (exp + retention).
//   Global secondary index by_exp: partition event_gen, sort exp_pos, projecting status — active tokens
//   (exp ≥ now, open) and expired tokens (exp < now, oldest first, equal exps by position) are range queries
//   of the current generation; records of an earlier generation (before a reset) are never read again and
//   DynamoDB's TTL deletes them once purge_at has passed.

import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import { StoreUnavailableError } from '../../domain/ports/store.ts';

export const TOKEN_TABLE = {
  partitionKey: 'request_id',
  sortKey: 'event_id',
  expiryIndex: 'by_exp',
  expiryIndexPartitionKey: 'event_gen',
  expiryIndexSortKey: 'exp_pos',
  ttlAttribute: 'purge_at',
} as const;

/** How long a token record is kept after its exp (expired_tokens lists it meanwhile). */
export const DEFAULT_RETENTION_SECONDS = 7 * 24 * 3600;

/** The CreateTable input of the token table (tests create it on dynalite; the CDK stack mirrors it). */
export function tokenTableDefinition(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: TOKEN_TABLE.partitionKey, AttributeType: 'S' as const },
      { AttributeName: TOKEN_TABLE.sortKey, AttributeType: 'S' as const },
      { AttributeName: TOKEN_TABLE.expiryIndexPartitionKey, AttributeType: 'S' as const },
      { AttributeName: TOKEN_TABLE.expiryIndexSortKey, AttributeType: 'S' as const },
    ],
    KeySchema: [
      { AttributeName: TOKEN_TABLE.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TOKEN_TABLE.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TOKEN_TABLE.expiryIndex,
        KeySchema: [
          { AttributeName: TOKEN_TABLE.expiryIndexPartitionKey, KeyType: 'HASH' as const },
          { AttributeName: TOKEN_TABLE.expiryIndexSortKey, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['status'] },
      },
    ],
  };
}

const DIGITS = 12;
const pad = (n: number) => String(Math.max(0, Math.trunc(n))).padStart(DIGITS, '0');
const eventGen = (eventId: string, gen: number) => `${eventId}#${gen}`;

const n = (value: number): AttributeValue => ({ N: String(value) });
const s = (value: string): AttributeValue => ({ S: value });
const num = (item: Record<string, AttributeValue>, name: string) => Number(item[name]?.N ?? NaN);
const str = (item: Record<string, AttributeValue>, name: string) => item[name]?.S;

/** A stored record with the reset generation it was issued in. */
export interface StoredToken {
  record: TokenRecord;
  gen: number;
}

export type PutOutcome = { outcome: 'created' } | { outcome: 'existing'; stored: StoredToken };

export type CloseOutcome =
  | { outcome: 'closed' }
  /** The session of this generation was closed before, with this status. */
  | { outcome: 'already-closed'; status: Exclude<SessionStatus, 0> }
  | { outcome: 'missing' };

export interface TokenTableOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionSeconds?: number;
}

export class TokenTable {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly retention: number;

  constructor(options: TokenTableOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.retention = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  }

  /** client.send, with outages turned into StoreUnavailableError. */
  private readonly send = ((command: Parameters<DynamoDBClient['send']>[0]) =>
    this.client.send(command).catch((error: unknown) => {
      throw toStoreError(error);
    })) as DynamoDBClient['send'];

  private key(eventId: string, requestId: string): Record<string, AttributeValue> {
    return { [TOKEN_TABLE.partitionKey]: s(requestId), [TOKEN_TABLE.sortKey]: s(eventId) };
  }

  /**
   * The single point where a token set is created: a conditional put that succeeds only if the request ID has
   * no record of this generation (or only one from before a reset). Otherwise answers the stored record.
   */
  async putIfAbsent(eventId: string, gen: number, record: TokenRecord): Promise<PutOutcome> {
    const item: Record<string, AttributeValue> = {
      ...this.key(eventId, record.requestId),
      position: n(record.position),
      iat: n(record.iat),
      nbf: n(record.nbf),
      exp: n(record.exp),
      iss: s(record.iss),
      kid: s(record.kid),
      status: n(0),
      gen: n(gen),
      [TOKEN_TABLE.expiryIndexPartitionKey]: s(eventGen(eventId, gen)),
      [TOKEN_TABLE.expiryIndexSortKey]: s(`${pad(record.exp)}#${pad(record.position)}`),
      [TOKEN_TABLE.ttlAttribute]: n(record.exp + this.retention),
    };
    if (record.nonce !== undefined) item.nonce = s(record.nonce);
    if (record.signatures !== undefined) item.signatures = s(record.signatures);
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk) OR #gen < :gen',
          ExpressionAttributeNames: { '#pk': TOKEN_TABLE.partitionKey, '#gen': 'gen' },
          ExpressionAttributeValues: { ':gen': n(gen) },
        }),
      );
      return { outcome: 'created' };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const stored = await this.get(eventId, record.requestId);
    // The condition failed, so a record of this generation or a newer one exists (records are never deleted
    // by the application, only by TTL long after their exp).
    if (!stored) throw new Error(`token record of ${record.requestId} vanished after a failed conditional put`);
    return { outcome: 'existing', stored };
  }

  async get(eventId: string, requestId: string): Promise<StoredToken | null> {
    const reply = await this.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.key(eventId, requestId), ConsistentRead: true }),
    );
    return reply.Item ? toStored(requestId, reply.Item) : null;
  }

  /** Closes the open session of this generation once. */
  async close(eventId: string, gen: number, requestId: string, status: Exclude<SessionStatus, 0>): Promise<CloseOutcome> {
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(eventId, requestId),
          UpdateExpression: 'SET #status = :status',
          ConditionExpression: 'attribute_exists(#pk) AND #gen = :gen AND #status = :open',
          ExpressionAttributeNames: { '#pk': TOKEN_TABLE.partitionKey, '#gen': 'gen', '#status': 'status' },
          ExpressionAttributeValues: { ':gen': n(gen), ':status': n(status), ':open': n(0) },
        }),
      );
      return { outcome: 'closed' };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const stored = await this.get(eventId, requestId);
    if (stored && stored.gen === gen && stored.record.status !== 0) {
      return { outcome: 'already-closed', status: stored.record.status };
    }
    return { outcome: 'missing' };
  }

  /** Tokens of this generation with exp ≥ now whose session is open. Reads every such record (paged). */
  async countActive(eventId: string, gen: number, now: number): Promise<number> {
    let count = 0;
    let start: Record<string, AttributeValue> | undefined;
    do {
      const reply = await this.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: TOKEN_TABLE.expiryIndex,
          KeyConditionExpression: '#eg = :eg AND #ep >= :from',
          FilterExpression: '#status = :open',
          ExpressionAttributeNames: {
            '#eg': TOKEN_TABLE.expiryIndexPartitionKey,
            '#ep': TOKEN_TABLE.expiryIndexSortKey,
            '#status': 'status',
          },
          ExpressionAttributeValues: { ':eg': s(eventGen(eventId, gen)), ':from': s(pad(now)), ':open': n(0) },
          Select: 'COUNT',
          ExclusiveStartKey: start,
        }),
      );
      count += reply.Count ?? 0;
      start = reply.LastEvaluatedKey;
    } while (start);
    return count;
  }

  /** Request IDs of this generation whose exp < now, any status, oldest first (equal exps by position). */
  async listExpired(eventId: string, gen: number, now: number, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let start: Record<string, AttributeValue> | undefined;
    while (ids.length < limit) {
      const reply = await this.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: TOKEN_TABLE.expiryIndex,
          KeyConditionExpression: '#eg = :eg AND #ep < :to',
          ExpressionAttributeNames: { '#eg': TOKEN_TABLE.expiryIndexPartitionKey, '#ep': TOKEN_TABLE.expiryIndexSortKey },
          ExpressionAttributeValues: { ':eg': s(eventGen(eventId, gen)), ':to': s(pad(now)) },
          ScanIndexForward: true,
          Limit: Math.min(1000, limit - ids.length),
          ExclusiveStartKey: start,
        }),
      );
      for (const item of reply.Items ?? []) {
        const id = str(item, TOKEN_TABLE.partitionKey);
        if (id !== undefined) ids.push(id);
      }
      start = reply.LastEvaluatedKey;
      if (!start) break;
    }
    return ids.slice(0, limit);
  }
}

/** DynamoDB answers that mean "not available right now" (the HTTP layer turns them into 503 + Retry-After). */
const UNAVAILABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);

function toStoreError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof ConditionalCheckFailedException) return error;
  const code = (error as { code?: string }).code;
  if (UNAVAILABLE.has(error.name) || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT') {
    return new StoreUnavailableError(`DynamoDB unavailable: ${error.message}`, { cause: error });
  }
  return error;
}

function toStored(requestId: string, item: Record<string, AttributeValue>): StoredToken {
  const nonce = str(item, 'nonce');
  return {
    gen: num(item, 'gen'),
    record: {
      requestId,
      position: num(item, 'position'),
      iat: num(item, 'iat'),
      nbf: num(item, 'nbf'),
      exp: num(item, 'exp'),
      iss: str(item, 'iss') ?? '',
      kid: str(item, 'kid') ?? '',
      status: num(item, 'status') as SessionStatus,
      nonce,
      signatures: str(item, 'signatures'),
    },
  };
}
