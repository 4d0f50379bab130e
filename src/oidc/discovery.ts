// The discovery document (OpenID Connect Discovery 1.0 §3), exactly the fields spec/integrations.md §2
// lists. Every endpoint hangs off the issuer, which is the adapter's base URL.

export interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  response_types_supported: ['code'];
  scopes_supported: ['openid'];
  subject_types_supported: ['public'];
  id_token_signing_alg_values_supported: string[];
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'];
  grant_types_supported: ['authorization_code'];
  code_challenge_methods_supported: ['S256'];
}

/** `algorithms`: the signing_algorithm of every OIDC room (RS256 when there is none). */
export function discoveryDocument(issuer: string, algorithms: readonly string[] = ['RS256']): DiscoveryDocument {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userInfo`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    scopes_supported: ['openid'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algorithms.length > 0 ? [...new Set(algorithms)] : ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
  };
}
