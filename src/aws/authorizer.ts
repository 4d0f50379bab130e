// The API Gateway Lambda authorizer of the authorizers stack (VWR's ApiGatewayAuthorizer): anteroom-authorizer's
// createLambdaAuthorizer, configured by the environment the stack sets from its parameters
// (PublicAPIEndpoint, WaitingRoomEventID, IssuerURI).

import { createLambdaAuthorizer, type AuthorizerEvent, type AuthorizerOptions, type AuthorizerResult } from 'anteroom-authorizer';
import { ConfigErrors } from '../domain/errors.ts';

export function authorizerOptionsFromEnv(env: Record<string, string | undefined> = process.env): AuthorizerOptions {
  const get = (name: string) => {
    const value = env[name];
    if (!value) throw ConfigErrors.awsEnvironment(`environment variable ${name} is required`);
    return value;
  };
  return {
    publicKeyUrl: `${get('PUBLIC_API_ENDPOINT').replace(/\/+$/, '')}/public_key`,
    eventId: get('WAITING_ROOM_EVENT_ID'),
    issuer: get('ISSUER'),
  };
}

// Built on first use and kept: its key cache must survive across invocations of a warm function.
let authorize: ((event: AuthorizerEvent) => Promise<AuthorizerResult>) | undefined;

export const handler = (event: AuthorizerEvent): Promise<AuthorizerResult> =>
  (authorize ??= createLambdaAuthorizer(authorizerOptionsFromEnv()))(event);
