// AWS API Gateway (REST API) Lambda authorizer, TOKEN and REQUEST types.
// API Gateway turns the outcome into the status: throwing `Error("Unauthorized")` → 401, a Deny policy →
// 403, any other error → 500. So: missing token → 401, invalid token → Deny (403), and keys that cannot be
// fetched → a thrown error (500). The last is deliberate: API Gateway caches a returned policy per token
// for the authorizer's TTL, so a Deny returned during a key-endpoint outage would lock a valid visitor out
// long after the outage; an error is not cached.
import { AuthorizerError } from './errors.ts';
import type { RefusalReason } from './errors.ts';
import { extractToken, tokenFromAuthorization } from './extract.ts';
import type { HeaderBag } from './extract.ts';
import type { AuthorizerOptions } from './middleware.ts';
import { createVerifier } from './verify.ts';

export interface TokenAuthorizerEvent {
  type: 'TOKEN';
  /** The identity-source header's value, e.g. `Bearer <jwt>` or the raw JWT. */
  authorizationToken?: string | null;
  methodArn: string;
}

export interface RequestAuthorizerEvent {
  type: 'REQUEST';
  methodArn: string;
  headers?: HeaderBag | null;
  /** The rest of the event (path, query string, requestContext, …) is not used. */
  readonly [field: string]: unknown;
}

export type AuthorizerEvent = TokenAuthorizerEvent | RequestAuthorizerEvent;

export interface PolicyStatement {
  Action: 'execute-api:Invoke';
  Effect: 'Allow' | 'Deny';
  Resource: string;
}

export interface AuthorizerResult {
  principalId: string;
  policyDocument: { Version: '2012-10-17'; Statement: PolicyStatement[] };
  /** Allow: the visitor; Deny: why (usable as `$context.authorizer.reason` in gateway response templates). */
  context: { event_id: string; request_id: string; queue_position: number } | { reason: RefusalReason };
}

/** Create once, at module scope, so the key cache survives across invocations of a warm Lambda. */
export function createLambdaAuthorizer(options: AuthorizerOptions): (event: AuthorizerEvent) => Promise<AuthorizerResult> {
  const verifier = createVerifier(options);
  return async function authorize(event) {
    // The policy covers the whole API, not just methodArn: API Gateway caches it per token and applies it to
    // the visitor's next calls, which go to other routes (a policy for one route denies all the others).
    const resource = `${apiArnBase(event.methodArn)}/*/*/*`;
    const token =
      event.type === 'TOKEN' ? tokenFromAuthorization(event.authorizationToken) : extractToken(event.headers, options);
    try {
      const claims = await verifier.verify(token);
      return {
        principalId: claims.sub,
        policyDocument: policy('Allow', resource),
        context: { event_id: claims.aud, request_id: claims.sub, queue_position: claims.queue_position },
      };
    } catch (error) {
      if (!(error instanceof AuthorizerError) || error.status === 503) throw error;
      if (error.status === 401) throw new Error('Unauthorized', { cause: error });
      return { principalId: 'denied', policyDocument: policy('Deny', resource), context: { reason: error.reason } };
    }
  };
}

const METHOD_ARN = /^(arn:[^:]+:execute-api:[^:]+:[^:]+:[^:/]+)\//;

/** `arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/store` → `arn:aws:execute-api:us-east-1:123456789012:abc123`. */
export function apiArnBase(methodArn: string): string {
  const base = METHOD_ARN.exec(methodArn)?.[1];
  if (base === undefined) throw new Error('methodArn is not an API Gateway method ARN');
  return base;
}

function policy(effect: PolicyStatement['Effect'], resource: string): AuthorizerResult['policyDocument'] {
  return { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] };
}
