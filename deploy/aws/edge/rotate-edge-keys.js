// Rotates the edge-cookie keys for the CloudFront Function (docs/edge.md "CloudFront"). NOT RUN ON AWS: only in
// Node against a real Anteroom node and a stand-in KeyValueStore client (test/aws/edge-stack.test.ts). Inline
// Lambda code (CommonJS, kept under CloudFormation's 4 KB) of the sample stack's EdgeKeyRotation function,
// scheduled by the stack. Anteroom stays the one source of keys: it signs edge cookies with its newest key.
// Each run: POST /private/edge_config/rotate_key (when the event says {"rotate": true}: daily; Anteroom keeps
// the previous key, the overlap),
// then GET /private/edge_config, and makes the KeyValueStore hold exactly `edge-hmac-<kid>` = HMAC key of each
// key listed (puts and deletes in one UpdateKeys, guarded by the store's ETag).
// Environment: ANTEROOM_PRIVATE_URL (…/private), ADMIN_TOKEN_SECRET_ARN (a Secrets Manager secret whose string
// is Anteroom's admin token), KVS_ARN.
/* global fetch, require, process, module */
'use strict';

const PREFIX = 'edge-hmac-';

/** The keys of an exported anteroom-edge-config.js: [{ kid, hmac }]. */
function keysOf(moduleText) {
  const start = moduleText.indexOf('export default ');
  if (start < 0) throw new Error('not an edge config module');
  const config = JSON.parse(moduleText.slice(start + 15).trim().replace(/;$/, ''));
  return config.keys.filter((k) => typeof k.hmac === 'string').map((k) => ({ kid: k.kid, hmac: k.hmac }));
}

/** One run with injected parts: `kvs` = { describe() → etag, keys() → [names], update(etag, puts, deletes) }. */
async function rotateEdgeKeys(deps) {
  const auth = { authorization: 'Bearer ' + deps.adminToken };
  if (deps.rotate) {
    const rotated = await fetch(deps.privateUrl + '/edge_config/rotate_key', { method: 'POST', headers: auth });
    if (!rotated.ok) throw new Error('rotate_key answered ' + rotated.status);
  }
  const exported = await fetch(deps.privateUrl + '/edge_config', { headers: auth });
  if (!exported.ok) throw new Error('edge_config answered ' + exported.status);
  const keys = keysOf(await exported.text());
  if (keys.length === 0) throw new Error('the export holds no HMAC key');
  const wanted = new Set(keys.map((k) => PREFIX + k.kid));
  const present = await deps.kvs.keys();
  const puts = keys.map((k) => ({ Key: PREFIX + k.kid, Value: k.hmac }));
  const deletes = present.filter((name) => name.startsWith(PREFIX) && !wanted.has(name)).map((name) => ({ Key: name }));
  await deps.kvs.update(await deps.kvs.describe(), puts, deletes);
  return { kids: keys.map((k) => k.kid), deleted: deletes.length };
}

/** The KeyValueStore through the SDK of Lambda's Node.js runtime (not installed in this repository). */
function sdkKvs(arn) {
  const sdk = require('@aws-sdk/client-cloudfront-keyvaluestore'); // eslint-disable-line @typescript-eslint/no-require-imports -- Lambda's runtime SDK
  const client = new sdk.CloudFrontKeyValueStoreClient({});
  return {
    describe: async () => (await client.send(new sdk.DescribeKeyValueStoreCommand({ KvsARN: arn }))).ETag,
    keys: async () => {
      const names = [];
      let token;
      do {
        const page = await client.send(new sdk.ListKeysCommand({ KvsARN: arn, NextToken: token }));
        for (const item of page.Items || []) names.push(item.Key);
        token = page.NextToken;
      } while (token);
      return names;
    },
    update: (etag, puts, deletes) => client.send(new sdk.UpdateKeysCommand({ KvsARN: arn, IfMatch: etag, Puts: puts, Deletes: deletes })),
  };
}

async function handler(event) {
  const sm = require('@aws-sdk/client-secrets-manager'); // eslint-disable-line @typescript-eslint/no-require-imports -- Lambda's runtime SDK
  const secret = await new sm.SecretsManagerClient({}).send(new sm.GetSecretValueCommand({ SecretId: process.env.ADMIN_TOKEN_SECRET_ARN }));
  return rotateEdgeKeys({
    privateUrl: process.env.ANTEROOM_PRIVATE_URL.replace(/\/$/, ''),
    adminToken: secret.SecretString,
    rotate: Boolean(event && event.rotate === true),
    kvs: sdkKvs(process.env.KVS_ARN),
  });
}

module.exports = { handler, rotateEdgeKeys, keysOf };
