// Verify at the edge on CloudFront (docs/edge.md "CloudFront", deploy/aws/stacks/edge.ts): the sample stack's
// KeyValueStore, CloudFront Function and key rotation, as synthesised; and the rotation code exactly as the
// template inlines it, run in Node against a real Anteroom node and a KeyValueStore held in memory (the
// stand-in for the KeyValueStore client of Lambda's runtime). Not run on AWS.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, TEMPLATE_NAMES } from '../../deploy/aws/templates.ts';
import { CLOUDFRONT_FUNCTION_MAX_BYTES } from '../../deploy/aws/edge/build-function.ts';
import { INLINE_CODE_MAX } from '../../deploy/aws/stacks/edge.ts';
import { EdgeKeys } from '../../src/gate/edge-keys.ts';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from '../gate/support.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const outdir = mkdtempSync(join(tmpdir(), 'anteroom-cdk-edge-'));
after(() => rmSync(outdir, { recursive: true, force: true }));
const sample = buildApp({ outdir }).app.synth().getStackByName(TEMPLATE_NAMES.sample).template as Json;
const resources = Object.entries(sample.Resources as Record<string, Json>);
const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
const one = (type: string): [string, Json] => {
  const found = ofType(type).filter(([id]) => id.startsWith('EdgeVerification'));
  assert.equal(found.length, 1, type);
  return found[0] as [string, Json];
};

/** Fn::Join of strings and Refs, with each Ref replaced by `refs`. */
function joined(value: Json, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const [separator, parts] = value['Fn::Join'] as [string, (string | Json)[]];
  return parts.map((p) => (typeof p === 'string' ? p : refs[p.Ref as string])).join(separator);
}

describe('the sample stack\'s edge verification (synthesised; not run on AWS)', () => {
  it('is off unless EdgeAnteroomPrivateUrl is given: every edge resource and output under that condition', () => {
    assert.equal(sample.Parameters.EdgeAnteroomPrivateUrl.Default, '');
    assert.deepEqual(sample.Conditions.EdgeVerificationOn, { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'EdgeAnteroomPrivateUrl' }, ''] }] });
    const edge = resources.filter(([id]) => id.startsWith('EdgeVerification'));
    assert.ok(edge.length >= 8);
    for (const [id, r] of edge) assert.equal(r.Condition, 'EdgeVerificationOn', id);
    assert.equal(sample.Outputs.EdgeFunctionARN.Condition, 'EdgeVerificationOn');
  });

  it('a cloudfront-js-2.0 function reading the KeyValueStore, under 10 KB with the room in it', () => {
    const [storeId] = one('AWS::CloudFront::KeyValueStore');
    const [, fn] = one('AWS::CloudFront::Function');
    assert.equal(fn.Properties.FunctionConfig.Runtime, 'cloudfront-js-2.0');
    assert.deepEqual(fn.Properties.FunctionConfig.KeyValueStoreAssociations, [{ KeyValueStoreARN: { 'Fn::GetAtt': [storeId, 'Arn'] } }]);
    const code = joined(fn.Properties.FunctionCode, { EventID: 'a-room-id-of-sixty-four-characters-0123456789-abcdefghijklmnopqr' });
    assert.match(code, /"event_id":"a-room-id-of-sixty-four/);
    assert.match(code, /kvs\.get\('edge-hmac-' \+ kid\)/);
    assert.ok(Buffer.byteLength(code) <= CLOUDFRONT_FUNCTION_MAX_BYTES, `${Buffer.byteLength(code)} bytes`);
  });

  it('the rotation function: inline code under 4 KB, the store\'s three calls on that store only, the token secret, sync every 5 minutes and rotation daily', () => {
    const [storeId] = one('AWS::CloudFront::KeyValueStore');
    const [fnId, fn] = one('AWS::Lambda::Function');
    assert.ok(String(fn.Properties.Code.ZipFile).length <= INLINE_CODE_MAX);
    assert.deepEqual(fn.Properties.Environment.Variables.KVS_ARN, { 'Fn::GetAtt': [storeId, 'Arn'] });
    const [, policy] = one('AWS::IAM::Policy');
    assert.deepEqual(policy.Properties.PolicyDocument.Statement, [
      {
        Effect: 'Allow',
        Action: ['cloudfront-keyvaluestore:DescribeKeyValueStore', 'cloudfront-keyvaluestore:ListKeys', 'cloudfront-keyvaluestore:UpdateKeys'],
        Resource: { 'Fn::GetAtt': [storeId, 'Arn'] },
      },
      { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: 'EdgeAdminTokenSecretArn' } },
    ]);
    const rules = ofType('AWS::Events::Rule')
      .filter(([id]) => id.startsWith('EdgeVerification'))
      .map(([, r]) => [r.Properties.ScheduleExpression, r.Properties.Targets[0].Input, r.Properties.Targets[0].Arn['Fn::GetAtt'][0]]);
    assert.deepEqual(rules.sort(), [
      ['rate(1 day)', '{"rotate":true}', fnId],
      ['rate(5 minutes)', '{"rotate":false}', fnId],
    ]);
  });
});

describe('the rotation code as inlined, against a real Anteroom node and a KeyValueStore in memory', () => {
  let origin: Origin;
  let node: GateNode;
  let dir: string;
  let rotateEdgeKeys: (deps: Json) => Promise<{ kids: string[]; deleted: number }>;
  /** The stand-in store: keys, and an ETag that every update must match (as UpdateKeys' IfMatch). */
  const store = new Map<string, string>();
  let etag = 0;
  const kvs = {
    describe: async () => `etag-${etag}`,
    keys: async () => [...store.keys()],
    update: async (ifMatch: string, puts: { Key: string; Value: string }[], deletes: { Key: string }[]) => {
      if (ifMatch !== `etag-${etag}`) throw new Error('ETag mismatch');
      for (const d of deletes) store.delete(d.Key);
      for (const p of puts) store.set(p.Key, p.Value);
      etag++;
    },
  };

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url)]);
    const [, fn] = one('AWS::Lambda::Function');
    dir = mkdtempSync(join(tmpdir(), 'anteroom-edge-rotation-'));
    writeFileSync(join(dir, 'index.js'), String(fn.Properties.Code.ZipFile));
    ({ rotateEdgeKeys } = createRequire(import.meta.url)(join(dir, 'index.js')) as { rotateEdgeKeys: typeof rotateEdgeKeys });
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (rotate: boolean) => rotateEdgeKeys({ privateUrl: node.privateUrl.replace(/\/$/, ''), adminToken: TEST_CREDENTIALS.adminToken, rotate, kvs });
  const signing = async () => new EdgeKeys(node.store, Date.now).current();
  const edgeEntries = () => [...store.keys()].filter((k) => k.startsWith('edge-hmac-')).sort();

  it('a sync writes the key Anteroom signs with; rotations keep the previous key (the overlap) and drop older ones', async () => {
    store.set('edge-hmac-edge-stale', 'x'.repeat(64));
    store.set('unrelated', 'kept');
    await run(false);
    const first = await signing();
    assert.deepEqual(edgeEntries(), [`edge-hmac-${first.kid}`]);
    assert.equal(store.get(`edge-hmac-${first.kid}`), first.hmac);
    assert.equal(store.get('unrelated'), 'kept');

    await run(true);
    const second = await signing();
    assert.notEqual(second.kid, first.kid);
    assert.deepEqual(edgeEntries(), [`edge-hmac-${first.kid}`, `edge-hmac-${second.kid}`].sort());
    assert.equal(store.get(`edge-hmac-${second.kid}`), second.hmac);

    const result = await run(true);
    const third = await signing();
    assert.deepEqual(edgeEntries(), [`edge-hmac-${second.kid}`, `edge-hmac-${third.kid}`].sort());
    assert.equal(result.deleted, 1);
  });

  it('a refused admin token changes nothing', async () => {
    const before = new Map(store);
    await assert.rejects(rotateEdgeKeys({ privateUrl: node.privateUrl.replace(/\/$/, ''), adminToken: 'wrong', rotate: true, kvs }), /rotate_key answered 403/);
    assert.deepEqual(store, before);
  });
});
