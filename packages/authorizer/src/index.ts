// Public API of `anteroom-authorizer`: protect a site's API with the access tokens a waiting room issues.
export { AuthorizerError, REFUSALS } from './errors.ts';
export type { RefusalReason } from './errors.ts';
export { createVerifier, verifyAccessToken, verifyAccessTokenWithKeys } from './verify.ts';
export type { AccessTokenRules, Verifier, VerifierOptions, VerifiedClaims } from './verify.ts';
export { extractToken, tokenFromAuthorization } from './extract.ts';
export type { ExtractOptions, HeaderBag } from './extract.ts';
export { expressAuthorizer, fastifyAuthorizer } from './middleware.ts';
export { DEFAULT_TOKEN_COOKIE, HANDOFF_PARAMETER, exchangeHandoffCode, expressHandoff, fastifyHandoff } from './handoff.ts';
export type { ExchangedToken, HandoffOptions } from './handoff.ts';
export type { AuthorizerOptions, WaitingRoomRequest } from './middleware.ts';
export { apiArnBase, createLambdaAuthorizer } from './lambda.ts';
export type {
  AuthorizerEvent,
  AuthorizerResult,
  PolicyStatement,
  RequestAuthorizerEvent,
  TokenAuthorizerEvent,
} from './lambda.ts';
