// The CloudFormation templates, synthesised once from the CDK app, checked with aws-cdk-lib/assertions:
// VWR's parameters, defaults and outputs, the architecture's load-bearing settings, and least privilege.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { buildApp, TEMPLATE_NAMES, type TemplateKey } from '../../deploy/aws/templates.ts';
import { CORE_LIMIT_PARAMETERS } from '../../deploy/aws/stacks/common.ts';
import { ADMISSION_JOB_MEMORY, CACHE_POLICIES, INTAKE_CONSUMERS, PRIVATE_ROOM_ROUTES, PRIVATE_ROUTES, PUBLIC_ROUTES } from '../../deploy/aws/stacks/core.ts';
import { CORE_EXPORTS } from '../../deploy/aws/stacks/core-exports.ts';
import { awsConfigFromEnv, CORE_SETTING_NAMES } from '../../src/aws/environment.ts';
import { TOKEN_TABLE } from '../../src/store/dynamodb/token-table.ts';
import { SHOP_OPERATIONS } from '../../src/web/shop-api.ts';

const outdir = mkdtempSync(join(tmpdir(), 'anteroom-cdk-'));
after(() => rmSync(outdir, { recursive: true, force: true }));
const assembly = buildApp({ outdir }).app.synth();
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (key: TemplateKey) => assembly.getStackByName(TEMPLATE_NAMES[key]).template as Json;
const template = (key: TemplateKey) => Template.fromJSON(json(key));
const resourcesOf = (key: TemplateKey, type: string) =>
  Object.entries(json(key).Resources as Record<string, Json>).filter(([, r]) => r.Type === type);

/** The core's waiting-room functions: all but the CDN purge function, which works outside the VPC. */
const roomFunctions = () => resourcesOf('core', 'AWS::Lambda::Function').filter(([id]) => !id.startsWith('CdnPurgeFunction'));

/** Every IAM statement of a template (inline role policies, policies, managed policies). */
function statementsOf(key: TemplateKey): Json[] {
  const found: Json[] = [];
  for (const [, resource] of Object.entries(json(key).Resources as Record<string, Json>)) {
    const documents: Json[] = [];
    if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') documents.push(resource.Properties.PolicyDocument);
    if (resource.Type === 'AWS::IAM::Role') for (const p of resource.Properties.Policies ?? []) documents.push(p.PolicyDocument);
    for (const document of documents) found.push(...document.Statement);
  }
  return found;
}

/** The statements of the policy attached to the role of function `functionPrefix` of `key`. */
function functionStatements(key: TemplateKey, functionPrefix: string): Json[] {
  return resourcesOf(key, 'AWS::IAM::Policy')
    .filter(([id]) => id.startsWith(`${functionPrefix}ServiceRole`))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[]);
}

function parameterDefaults(key: TemplateKey): Record<string, unknown> {
  return Object.fromEntries(Object.entries((json(key).Parameters ?? {}) as Record<string, Json>).map(([name, p]) => [name, p.Default]));
}

/**
 * A template value with its intrinsic functions evaluated: Ref and Fn::GetAtt become `<name>` (or what `refs`
 * answers), Fn::ImportValue what `imports` answers for the evaluated export name.
 */
function evaluate(value: unknown, refs: (name: string) => string | undefined = () => undefined, imports: (name: string) => unknown = (n) => `<import ${n}>`): unknown {
  const again = (v: unknown) => evaluate(v, refs, imports);
  if (Array.isArray(value)) return value.map(again);
  if (value === null || typeof value !== 'object') return value;
  const v = value as Json;
  if ('Ref' in v) return refs(v.Ref) ?? `<${v.Ref}>`;
  if ('Fn::GetAtt' in v) return `<${v['Fn::GetAtt'].join('.')}>`;
  if ('Fn::Join' in v) return (again(v['Fn::Join'][1]) as unknown[]).flat().join(v['Fn::Join'][0]);
  if ('Fn::Split' in v) return String(again(v['Fn::Split'][1])).split(v['Fn::Split'][0]);
  if ('Fn::ImportValue' in v) return imports(String(again(v['Fn::ImportValue'])));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, again(x)]));
}

/** The code-location parameters every template with functions has (deploy/aws/lambda-code.ts). */
const SOURCE = { SourceBucket: undefined, SourceKeyPrefix: 'anteroom' };

/** Keys under which a CloudFormation template names an S3 bucket (or a URL in one). */
const BUCKET_KEYS = new Set(['S3Bucket', 'Bucket', 'BucketName', 'DestinationBucketName', 'TemplateURL', 'TargetBucket']);

/**
 * Every place a template names a bucket, as [where, value]: a Ref to a parameter or an S3 bucket resource of
 * the template, a GetAtt of one, or anything else (which the test refuses).
 */
function bucketNames(template: Json): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  const walk = (value: unknown, where: string) => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}[${i}]`));
    if (value === null || typeof value !== 'object') return;
    for (const [key, v] of Object.entries(value as Json)) {
      if (BUCKET_KEYS.has(key)) found.push([`${where}.${key}`, v]);
      walk(v, `${where}.${key}`);
    }
  };
  walk(template.Resources, 'Resources');
  return found;
}

/** Whether `value` names only a parameter of `template` or one of its own buckets (a URL: built on them). */
function namesOwnBucket(template: Json, value: unknown, where: string): boolean {
  const parameters = (template.Parameters ?? {}) as Json;
  const ownBucket = (id: string) => template.Resources[id]?.Type === 'AWS::S3::Bucket';
  const v = value as Json;
  if (v && typeof v === 'object' && 'Ref' in v) return v.Ref in parameters || ownBucket(v.Ref);
  if (v && typeof v === 'object' && 'Fn::GetAtt' in v) return ownBucket(v['Fn::GetAtt'][0]);
  if (where.endsWith('.TemplateURL') && v && typeof v === 'object' && 'Fn::Join' in v) {
    // https://<SourceBucket>.s3.<region>.<suffix>/<SourceKeyPrefix>/<name>: the host is the parameter.
    const parts = v['Fn::Join'][1] as unknown[];
    return parts[0] === 'https://' && JSON.stringify(parts[1]) === '{"Ref":"SourceBucket"}' && parts[2] === '.s3.';
  }
  return false;
}

describe('CloudFormation templates', () => {
  it('name no bucket but a parameter or their own: no code or template from outside the deploying account', () => {
    const withDefaults = buildApp({ outdir: mkdtempSync(join(tmpdir(), 'anteroom-cdk-')), code: { mode: 'bucket', bucket: 'my-own-bucket', keyPrefix: 'anteroom/1.0' } }).app.synth();
    let checked = 0;
    for (const name of Object.values(TEMPLATE_NAMES)) {
      for (const t of [
        assembly.getStackByName(name).template as Json,
        withDefaults.getStackByName(name).template as Json,
        JSON.parse(readFileSync(new URL(`../../deploy/aws/templates/${name}.template.json`, import.meta.url), 'utf8')) as Json,
      ]) {
        for (const [where, value] of bucketNames(t)) {
          checked++;
          assert.ok(namesOwnBucket(t, value, where), `${name} ${where}: ${JSON.stringify(value)}`);
        }
        // No bucket-looking literal anywhere (the old distribution bucket, an s3:// or S3 website URL).
        assert.doesNotMatch(JSON.stringify(t.Resources), /anteroom-dist|s3:\/\/|\.s3\.amazonaws\.com|FindInMap/, name);
      }
    }
    assert.ok(checked >= 20, `${checked} bucket references`);
    // The committed templates make the deployer name their bucket; `npm run synth -- --bucket` gives a default.
    assert.equal((json('core').Parameters as Json).SourceBucket.Default, undefined);
    assert.equal((withDefaults.getStackByName(TEMPLATE_NAMES.core).template as Json).Parameters.SourceBucket.Default, 'my-own-bucket');
    const [, fn] = resourcesOf('core', 'AWS::Lambda::Function')[0]!;
    assert.deepEqual(fn.Properties.Code.S3Bucket, { Ref: 'SourceBucket' });
    assert.deepEqual(fn.Properties.Code.S3Key, { 'Fn::Join': ['/', [{ Ref: 'SourceKeyPrefix' }, fn.Properties.Code.S3Key['Fn::Join'][1][1]]] });
  });


  it('are the seven templates of VWR, by name', () => {
    assert.deepEqual(
      assembly.stacks.map((s) => s.stackName).sort(),
      Object.values(TEMPLATE_NAMES).sort(),
    );
  });

  it('core: VWR parameters and defaults', () => {
    assert.deepEqual(parameterDefaults('core'), {
      EventId: undefined,
      ValidityPeriod: 3600,
      EnableEventsGeneration: 'false',
      RedisPort: 1785,
      EnableQueuePositionExpiry: 'true',
      QueuePositionExpiryPeriod: 900,
      IncrSvcOnQueuePositionExpiry: 'false',
      ...SOURCE,
      // Flood limits (not VWR's; all with defaults, so VWR's parameter files still deploy).
      ...Object.fromEntries(Object.entries(CORE_LIMIT_PARAMETERS).map(([name, [, value]]) => [name, value])),
      WebACLArn: '',
    });
    const p = json('core').Parameters as Json;
    assert.deepEqual(p.EnableEventsGeneration.AllowedValues, ['true', 'false']);
    assert.equal(p.ValidityPeriod.Type, 'Number');
  });

  it('getting-started: the same parameters, EventId defaulting to Sample, and nests core + authorizers + sample', () => {
    assert.deepEqual(parameterDefaults('gettingStarted'), { ...parameterDefaults('core'), EventId: 'Sample' });
    const nested = resourcesOf('gettingStarted', 'AWS::CloudFormation::Stack').map(([id]) => id).sort();
    assert.deepEqual(nested, ['AuthorizersModuleStack', 'CoreModuleStack', 'SampleModuleStack']);
    const core = json('gettingStarted').Resources.CoreModuleStack.Properties;
    assert.deepEqual(Object.keys(core.Parameters).sort(), Object.keys(json('core').Parameters).sort());
    assert.match(JSON.stringify(core.TemplateURL), /virtual-waiting-room-on-aws\.template\.json/);
  });

  it('authorizers, openid, sample and inlet stacks: VWR parameters and defaults', () => {
    assert.deepEqual(parameterDefaults('authorizers'), { PublicAPIEndpoint: undefined, WaitingRoomEventID: undefined, IssuerURI: undefined, ...SOURCE });
    // VWR's four, then the code location and flood limits (with defaults).
    assert.deepEqual(parameterDefaults('openid'), {
      PublicAPIEndpoint: undefined, PrivateAPIEndpoint: undefined, APIRegion: undefined, EventID: undefined, ...SOURCE,
      ApiRateLimit: 1000, ApiBurstLimit: 500, ReservedConcurrency: 50, WafRateLimit: 0,
    });
    assert.equal(json('openid').Parameters.EventID.AllowedPattern, json('core').Parameters.EventId.AllowedPattern);
    assert.deepEqual(parameterDefaults('sample'), {
      AuthorizerARN: undefined, APIGatewayRegion: undefined, PublicAPIEndpoint: undefined, PrivateAPIEndpoint: undefined, EventID: undefined,
      // Verify at the edge (deploy/aws/stacks/edge.ts), off by default.
      EdgeAnteroomPrivateUrl: '', EdgeAdminTokenSecretArn: '',
    });
    assert.deepEqual(parameterDefaults('inlet'), {
      EventId: undefined, PrivateCoreApiEndpoint: undefined, CoreApiRegion: undefined, InletStrategy: 'Periodic', IncrementBy: 10,
      StartTime: 1626336061, EndTime: 0, CloudWatchAlarmName: '', MaxSize: 100, ...SOURCE,
    });
    assert.deepEqual(json('inlet').Parameters.InletStrategy.AllowedValues, ['Periodic', 'MaxSize']);
    assert.deepEqual(parameterDefaults('cwLogsRole'), {});
  });

  it('outputs keep VWR names', () => {
    const outputs = (key: TemplateKey) => Object.keys(json(key).Outputs ?? {});
    for (const name of ['PublicApiInvokeURL', 'PrivateApiInvokeURL', 'PublicTokenIssuer', 'PrivateTokenIssuer']) {
      assert.ok(outputs('core').includes(name), name);
    }
    assert.deepEqual(outputs('gettingStarted').sort(), ['ControlPanelURL', 'CoreStackName', 'PrivateApiInvokeURL', 'PublicApiInvokeURL', 'SampleWebContentBucketName', 'WaitingRoomURL']);
    assert.deepEqual(json('core').Outputs.CoreStackName.Value, { Ref: 'AWS::StackName' });
    assert.deepEqual(outputs('authorizers'), ['ApiGatewayAuthorizerArn']);
    for (const name of ['IssuerURL', 'AuthorizationURL', 'TokenURL', 'UserInfoURL', 'PublicKeysURL', 'ConfigurationURL', 'ClientID', 'ClientSecretID', 'WaitingRoomWebContentBucket']) {
      assert.ok(outputs('openid').includes(name), name);
    }
    assert.ok(outputs('sample').includes('WaitingRoomURL') && outputs('sample').includes('ControlPanelURL'));
    assert.equal(json('inlet').Outputs.InletTopicARN.Condition, 'MaxSize');
    // The public API is CloudFront; the issuer and private URL end in VWR's stage name.
    assert.match(JSON.stringify(json('core').Outputs.PublicApiInvokeURL.Value), /PublicApiCloudFront/);
    assert.match(JSON.stringify(json('core').Outputs.PublicTokenIssuer.Value), /\/api"/);
  });

  it('CloudFront: a cache policy per polling path with its TTLs; joins and claims are never cached', () => {
    const resources = json('core').Resources as Record<string, Json>;
    const [, distribution] = resourcesOf('core', 'AWS::CloudFront::Distribution')[0]!;
    const config = distribution.Properties.DistributionConfig;
    const behaviours = config.CacheBehaviors as Json[];
    for (const policy of Object.values(CACHE_POLICIES)) {
      for (const path of policy.paths) {
        const behaviour = behaviours.find((b) => b.PathPattern === path);
        assert.ok(behaviour, `behaviour for ${path}`);
        const cache = resources[behaviour.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
        assert.deepEqual([cache.MinTTL, cache.DefaultTTL, cache.MaxTTL], [policy.minTtl, policy.defaultTtl, policy.maxTtl], path);
        assert.deepEqual(cache.ParametersInCacheKeyAndForwardedToOrigin.QueryStringsConfig.QueryStrings, [...policy.query]);
      }
    }
    assert.deepEqual(
      behaviours.map((b) => b.PathPattern).sort(),
      ['/draw', '/jwks.json', '/public_key', '/queue_num', '/queue_pos_expiry', '/serving_num', '/waiting_num'],
    );
    // Default behaviour (assign_queue_num, generate_token, …): the managed CachingDisabled policy, all methods.
    assert.equal(config.DefaultCacheBehavior.CachePolicyId, '4135ea2d-6df8-44a3-9df3-4b5a84be39ad');
    assert.ok(config.DefaultCacheBehavior.AllowedMethods.includes('POST'));
    // …and the managed AllViewerExceptHostHeader origin request policy: every viewer header reaches API Gateway,
    // the Idempotency-Key of a join or a leave included (docs/aws.md).
    assert.equal(config.DefaultCacheBehavior.OriginRequestPolicyId, 'b689b0a8-53d0-40ab-baf2-68738e2966ac');
    // The origin key header CloudFront adds, from a generated secret (never in the template's text).
    const origin = config.Origins[0];
    assert.equal(origin.OriginPath, '/api');
    const header = origin.OriginCustomHeaders.find((h: Json) => h.HeaderName === 'x-api-key');
    assert.match(JSON.stringify(header.HeaderValue), /resolve:secretsmanager/);
  });

  it('public API: one resource per VWR path, API key required (CloudFront’s), OPTIONS open; private API: IAM', () => {
    const t = template('core');
    const methods = resourcesOf('core', 'AWS::ApiGateway::Method').map(([, m]) => m.Properties);
    const publicCount = Object.keys(PUBLIC_ROUTES).length;
    const privateCount = Object.keys(PRIVATE_ROUTES).length;
    const roomPaths = Object.keys(PRIVATE_ROOM_ROUTES).length;
    const roomMethods = Object.values(PRIVATE_ROOM_ROUTES).flat().length;
    assert.equal(methods.filter((m) => m.ApiKeyRequired === true).length, publicCount);
    assert.equal(methods.filter((m) => m.AuthorizationType === 'AWS_IAM').length, privateCount + roomMethods);
    assert.equal(methods.filter((m) => m.HttpMethod === 'OPTIONS').length, publicCount + privateCount + roomPaths);
    const roomResource = resourcesOf('core', 'AWS::ApiGateway::Resource').find(([, r]) => r.Properties.PathPart === '{event_id}');
    assert.ok(roomResource, 'the rooms API has its /rooms/{event_id} resource');
    assert.ok(methods.filter((m) => m.HttpMethod === 'OPTIONS').every((m) => m.AuthorizationType === 'NONE' && !m.ApiKeyRequired));
    t.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'api' });
    t.hasResourceProperties('AWS::IAM::Group', {});
    t.hasResourceProperties('AWS::IAM::Policy', {
      Groups: Match.anyValue(),
      PolicyDocument: { Statement: [Match.objectLike({ Action: 'execute-api:Invoke', Effect: 'Allow' })] },
    });
  });

  it('SQS intake: dead-letter queue after 5 receives, SSE, partial batch responses from the consumer', () => {
    const t = template('core');
    const queues = resourcesOf('core', 'AWS::SQS::Queue');
    assert.equal(queues.length, 3, 'intake, its dead letters, CDN purge requests');
    const [dlqId] = queues.find(([id]) => id.startsWith('WaitingRoomDeadLetterQueue'))!;
    t.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 5 },
      VisibilityTimeout: 180,
      SqsManagedSseEnabled: true,
    });
    t.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 14 * 24 * 3600 });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 500,
    });
  });

  it('Redis with TLS and AUTH from Secrets Manager on RedisPort; functions in the VPC; DynamoDB token table', () => {
    const t = template('core');
    t.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      MultiAZEnabled: true,
      Port: { Ref: 'RedisPort' },
      AuthToken: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith([Match.stringLikeRegexp('resolve:secretsmanager')])]) }),
    });
    const functions = roomFunctions();
    assert.equal(functions.length, 8);
    for (const [id, fn] of functions) {
      assert.ok(fn.Properties.VpcConfig, `${id} in the VPC`);
      assert.equal(fn.Properties.Environment.Variables.REDIS_TLS, 'true');
    }
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'request_id', KeyType: 'HASH' }, { AttributeName: 'event_id', KeyType: 'RANGE' }],
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'by_exp' })],
      TimeToLiveSpecification: { AttributeName: 'purge_at', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
    });
    t.hasResourceProperties('AWS::Events::EventBus', {});
    // VWR's schedules only exist when their feature is on (VWR's conditions); the admission job, the draw and the
    // history always run (a room may be switched to automatic admission or get shuffle_at_event_start at any time).
    const rules = resourcesOf('core', 'AWS::Events::Rule').map(([, r]) => [r.Properties.ScheduleExpression, r.Condition ?? 'always']);
    assert.deepEqual(rules.sort(), [
      ['rate(1 minute)', 'GenerateWaitingRoomEvents'],
      ['rate(1 minute)', 'SetQueuePositionExpiredEvents'],
      ['rate(1 minute)', 'always'],
      ['rate(1 minute)', 'always'],
      ['rate(1 minute)', 'always'],
    ]);
  });

  it('the VPC endpoints admit HTTPS from the functions’ security group only, not from the whole VPC range', () => {
    const endpoints = resourcesOf('core', 'AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface');
    assert.equal(endpoints.length, 3);
    const [functionsSg] = resourcesOf('core', 'AWS::EC2::SecurityGroup').find(([id]) => id.startsWith('FunctionSecurityGroup'))!;
    for (const [id, endpoint] of endpoints) {
      const groups = endpoint.Properties.SecurityGroupIds.map((g: Json) => g['Fn::GetAtt'][0]);
      for (const group of groups) {
        const [, sg] = resourcesOf('core', 'AWS::EC2::SecurityGroup').find(([sgId]) => sgId === group)!;
        assert.equal(sg.Properties.SecurityGroupIngress, undefined, `${id}: no CIDR rule`);
        const ingress = resourcesOf('core', 'AWS::EC2::SecurityGroupIngress').filter(([, r]) => r.Properties.GroupId['Fn::GetAtt'][0] === group);
        assert.deepEqual(ingress.map(([, r]) => [r.Properties.SourceSecurityGroupId, r.Properties.FromPort, r.Properties.ToPort]), [
          [{ 'Fn::GetAtt': [functionsSg, 'GroupId'] }, 443, 443],
        ], id);
      }
    }
  });

  it('alarms: 4xx and 5xx per API, errors and throttles per function, dead letters waiting', () => {
    const alarms = resourcesOf('core', 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const by = (metric: string) => alarms.filter((a) => a.MetricName === metric);
    assert.equal(by('4XXError').length, 2);
    assert.equal(by('5XXError').length, 2);
    assert.equal(by('Errors').length, 9);
    assert.equal(by('Throttles').length, 9);
    assert.equal(by('ApproximateNumberOfMessagesVisible').length, 1);
    assert.ok(alarms.every((a) => a.Threshold === 0 && a.ComparisonOperator === 'GreaterThanThreshold'));
    assert.equal(resourcesOf('authorizers', 'AWS::CloudWatch::Alarm').length, 2);
  });

  it('no IAM policy in any template grants every action on every resource', () => {
    const statements = statementsOf;
    const list = (v: unknown) => (Array.isArray(v) ? v : [v]);
    let checked = 0;
    for (const key of Object.keys(TEMPLATE_NAMES) as TemplateKey[]) {
      for (const statement of statements(key)) {
        checked++;
        if (statement.Effect !== 'Allow') continue;
        const anyAction = list(statement.Action).some((a) => a === '*' || /^[a-z0-9-]+:\*$/.test(String(a)));
        const anyResource = list(statement.Resource).some((r) => r === '*');
        assert.ok(!(anyAction && anyResource), `${key}: ${JSON.stringify(statement)}`);
        assert.ok(!list(statement.Action).includes('*'), `${key}: Action "*"`);
      }
    }
    assert.ok(checked > 10);
  });

  it('openid: takes a VWR parameter file unchanged (templates synthesised with --bucket)', () => {
    const app = buildApp({ outdir: mkdtempSync(join(tmpdir(), 'anteroom-cdk-')), code: { mode: 'bucket', bucket: 'my-own-bucket' } }).app.synth();
    for (const key of ['openid', 'core', 'authorizers', 'sample', 'inlet'] as const) {
      const parameters = (app.getStackByName(TEMPLATE_NAMES[key]).template as Json).Parameters as Record<string, Json>;
      const required = Object.entries(parameters).filter(([, p]) => p.Default === undefined).map(([name]) => name).sort();
      const vwr = {
        openid: ['APIRegion', 'EventID', 'PrivateAPIEndpoint', 'PublicAPIEndpoint'],
        core: ['EventId'],
        authorizers: ['IssuerURI', 'PublicAPIEndpoint', 'WaitingRoomEventID'],
        sample: ['APIGatewayRegion', 'AuthorizerARN', 'EventID', 'PrivateAPIEndpoint', 'PublicAPIEndpoint'],
        inlet: ['CoreApiRegion', 'EventId', 'PrivateCoreApiEndpoint'],
      }[key];
      assert.deepEqual(required, vwr, key);
    }
    // APIRegion is honoured the only way exports allow: the stack must be in it, checked before anything is made.
    const rules = json('openid').Rules as Json;
    assert.deepEqual(rules.CoreInThisRegion.Assertions[0].Assert, { 'Fn::Equals': [{ Ref: 'APIRegion' }, { Ref: 'AWS::Region' }] });
  });

  it('openid: one function serves the stage `oidc` (VWR’s URLs: <api host>/oidc/...), its login page polls PublicAPIEndpoint', () => {
    const t = template('openid');
    const resources = json('openid').Resources as Record<string, Json>;
    const paths = Object.values(resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Resource')
      .map((r) => r.Properties.PathPart as string)
      .sort();
    assert.deepEqual(paths, ['{proxy+}']);
    const methods = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Method');
    const functions = resourcesOf('openid', 'AWS::Lambda::Function');
    assert.equal(functions.length, 1);
    const [fnId, fn] = functions[0]!;
    // ANY on /{proxy+} and (CDK mirrors a root proxy there) on the stage's root, both the function.
    assert.equal(methods.length, 2);
    for (const method of methods) {
      assert.equal(method.Properties.HttpMethod, 'ANY');
      assert.equal(method.Properties.Integration.Type, 'AWS_PROXY');
      assert.match(JSON.stringify(method.Properties.Integration.Uri), new RegExp(fnId));
    }
    t.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'oidc' });
    const env = fn.Properties.Environment.Variables as Json;
    assert.deepEqual(Object.keys(env).sort(), [
      'CLIENT_SECRET_ID', 'CORE_SETTINGS_SECRET_ARN', 'EVENT_ID', 'INTAKE_QUEUE_URL', 'PRIVATE_API_ENDPOINT', 'PUBLIC_API_URL', 'PUBLIC_URL', 'REDIRECT_URIS_SECRET_ID',
    ]);
    assert.deepEqual(env.PUBLIC_API_URL, { Ref: 'PublicAPIEndpoint' });
    assert.deepEqual(env.PRIVATE_API_ENDPOINT, { Ref: 'PrivateAPIEndpoint' });
    assert.deepEqual(env.EVENT_ID, { Ref: 'EventID' });
    const [apiId] = resourcesOf('openid', 'AWS::ApiGateway::RestApi')[0]!;
    const host = `https://<${apiId}>.execute-api.<AWS::Region>.<AWS::URLSuffix>`;
    assert.equal(evaluate(env.PUBLIC_URL), host);
    // VWR's outputs: the host, then the stage oidc, then the path.
    const outputs = json('openid').Outputs as Json;
    for (const [name, path] of [['IssuerURL', ''], ['AuthorizationURL', '/authorize'], ['TokenURL', '/token'], ['UserInfoURL', '/userInfo'],
      ['PublicKeysURL', '/.well-known/jwks.json'], ['ConfigurationURL', '/.well-known/openid-configuration']] as const) {
      assert.equal(evaluate(outputs[name].Value), `${host}/oidc${path}`, name);
    }
    assert.match(JSON.stringify(fn.Properties.Code), /oidc\.zip/);
  });

  it('core: its CoreSettings document holds exactly the settings its own functions run with', () => {
    const secrets = resourcesOf('core', 'AWS::SecretsManager::Secret').filter(([id]) => id.startsWith('CoreSettings'));
    assert.equal(secrets.length, 1);
    const [settingsId, settings] = secrets[0]!;
    const document = JSON.parse(String(evaluate(settings.Properties.SecretString))) as Record<string, string>;
    assert.deepEqual(Object.keys(document).sort(), [...CORE_SETTING_NAMES, 'PRIVATE_API_URL'].sort());
    // ...the private API's URL being the core's PrivateApiInvokeURL output, which an OpenID stack must name.
    assert.equal(document.PRIVATE_API_URL, evaluate(json('core').Outputs.PrivateApiInvokeURL.Value));
    assert.equal(document.EVENT_ID, '<EventId>');
    assert.equal(document.VALIDITY_PERIOD, '<ValidityPeriod>');
    for (const [id, fn] of roomFunctions()) {
      const variables = evaluate(fn.Properties.Environment.Variables) as Record<string, string>;
      for (const name of CORE_SETTING_NAMES) assert.equal(document[name], variables[name], `${id}: ${name}`);
    }
    assert.deepEqual(json('core').Outputs.CoreSettingsSecretArn.Value, { Ref: settingsId });
    // ...and nothing the core functions all share is missing from it.
    const shared = roomFunctions()
      .map(([, fn]) => Object.keys(fn.Properties.Environment.Variables as Json))
      .reduce((a, b) => a.filter((name) => b.includes(name)));
    assert.deepEqual(shared.sort(), [...CORE_SETTING_NAMES].sort());
    // The document is JSON built by joining parameter values: each one it uses must be unable to hold a quote.
    const parameters = json('core').Parameters as Record<string, Json>;
    const used = [...JSON.stringify(settings.Properties.SecretString).matchAll(/\{"Ref":"([A-Za-z0-9]+)"\}/g)]
      .map((m) => m[1]!)
      .filter((name) => name in parameters);
    assert.ok(used.length >= 6, used.join());
    for (const name of used) {
      const p = parameters[name]!;
      assert.ok(p.Type === 'Number' || p.AllowedValues || (p.AllowedPattern && !/["\\]/.test(p.AllowedPattern)), `${name} is constrained`);
    }
  });

  it('openid over core: every import is a core export, and the function gets the core functions’ network and resources', () => {
    const coreName = 'my-core';
    const stackName = (name: string) => (name === 'AWS::StackName' ? coreName : name === 'EventId' ? 'Sample' : undefined);
    // The core's exports, by name, with their values.
    const exported = new Map<string, unknown>();
    for (const output of Object.values(json('core').Outputs as Record<string, Json>)) {
      if (output.Export) exported.set(String(evaluate(output.Export.Name, stackName)), evaluate(output.Value, stackName));
    }
    // Named after the event ID: an OpenID stack given VWR's parameters (EventID) finds them.
    assert.deepEqual([...exported.keys()].sort(), Object.keys(CORE_EXPORTS).map((n) => `anteroom-Sample-${n}`).sort());
    // The OpenID stack deployed with EventID = the core's EventId: every import resolves.
    const used = new Set<string>();
    const resolved = (value: unknown) =>
      evaluate(value, (n) => (n === 'EventID' ? 'Sample' : undefined), (name) => {
        assert.ok(exported.has(name), `import ${name} is not exported by the core`);
        used.add(name);
        return exported.get(name);
      });
    const [, fn] = resourcesOf('openid', 'AWS::Lambda::Function')[0]!;
    const openidFn = resolved(fn.Properties) as Json;
    const [, coreFn] = resourcesOf('core', 'AWS::Lambda::Function').find(([id]) => id.startsWith('PublicApiFunction'))!;
    const publicFn = evaluate(coreFn.Properties) as Json;
    // Same subnets and security group (the one Redis admits) as the core's functions, and the right to use them.
    assert.ok(publicFn.VpcConfig);
    assert.deepEqual(openidFn.VpcConfig, publicFn.VpcConfig);
    const [, role] = resourcesOf('openid', 'AWS::IAM::Role')[0]!;
    assert.match(JSON.stringify(role.Properties.ManagedPolicyArns), /service-role\/AWSLambdaVPCAccessExecutionRole/);
    assert.equal(openidFn.Environment.Variables.CORE_SETTINGS_SECRET_ARN, `<${Object.keys(json('core').Resources).find((id) => id.startsWith('CoreSettings'))}>`);
    // What its role may touch, as a closed list: its own two secrets, and of the core: settings, Redis AUTH,
    // token table (its /token), bus, keys, and the intake queue, send only (its joins are buffered there).
    const actions = resourcesOf('openid', 'AWS::IAM::Policy')
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[])
      .flatMap((statement) => [statement.Action].flat())
      .sort();
    assert.deepEqual([...new Set(actions)], [
      'dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem',
      'events:PutEvents', 'secretsmanager:CreateSecret', 'secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue',
      'sqs:SendMessage',
    ]);
    const statements = resourcesOf('openid', 'AWS::IAM::Policy').flatMap(([, p]) => resolved(p.Properties.PolicyDocument.Statement) as Json[]);
    const resourcesFor = (action: string) => statements.filter((s) => [s.Action].flat().includes(action)).flatMap((s) => [s.Resource].flat()).sort();
    const coreResources = Object.keys(json('core').Resources);
    const coreId = (prefix: string) => coreResources.find((id) => id.startsWith(prefix))!;
    assert.deepEqual(resourcesFor('secretsmanager:DescribeSecret'), [
      `<${coreId('CoreSettings')}>`, `<${coreId('RedisAuthToken')}>`, '<ClientSecret6773D8CE>', '<RedirectUris' + 'C70872F3>',
    ].sort());
    // The table; of its indexes only the one the adapter queries, by name.
    assert.deepEqual(resourcesFor('dynamodb:PutItem'), [`<${coreId('TokenTable')}.Arn>`]);
    assert.deepEqual(resourcesFor('dynamodb:Query'), [`<${coreId('TokenTable')}.Arn>`, `<${coreId('TokenTable')}.Arn>/index/${TOKEN_TABLE.expiryIndex}`]);
    assert.deepEqual(resourcesFor('events:PutEvents'), [`<${coreId('WaitingRoomEventBus')}.Arn>`]);
    // The OpenID join takes the public API's buffer: the core's intake queue (the one the intake consumer reads
    // and the public API function sends to), send only.
    const [intakeQueue] = resourcesOf('core', 'AWS::SQS::Queue').find(([id]) => id.startsWith('WaitingRoomQueue'))!;
    assert.deepEqual(resourcesFor('sqs:SendMessage'), [`<${intakeQueue}.Arn>`]);
    assert.equal(openidFn.Environment.Variables.INTAKE_QUEUE_URL, `<${intakeQueue}>`);
    assert.equal(publicFn.Environment.Variables.INTAKE_QUEUE_URL, `<${intakeQueue}>`);
    const [, mapping] = resourcesOf('core', 'AWS::Lambda::EventSourceMapping').find(([, m]) => m.Properties.BatchSize === 500)!;
    assert.deepEqual(mapping.Properties.EventSourceArn, { 'Fn::GetAtt': [intakeQueue, 'Arn'] });
    assert.deepEqual(resourcesFor('secretsmanager:CreateSecret'), [`arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${coreName}/anteroom/signing-keys/*`]);
    assert.deepEqual([...used].sort(), [...exported.keys()].sort());
  });

  it('the inlet function may call only three routes of the core stack’s private API', () => {
    const policies = resourcesOf('inlet', 'AWS::IAM::Policy').map(([, p]) => p.Properties.PolicyDocument.Statement).flat();
    const invoke = policies.find((s: Json) => s.Action === 'execute-api:Invoke');
    assert.equal(invoke.Resource.length, 3);
    assert.match(JSON.stringify(invoke.Resource), /POST\/increment_serving_counter/);
    // On the core's stage only (`api`), no stage wildcard.
    for (const resource of invoke.Resource) assert.match(String((resource['Fn::Join'][1] as unknown[]).at(-1)), /^\/api\/(POST|GET)\//);
    assert.doesNotMatch(JSON.stringify(invoke.Resource), /\*/);
    const conditioned = resourcesOf('inlet', 'AWS::Lambda::Function').map(([, f]) => f.Condition).sort();
    assert.deepEqual(conditioned, ['MaxSize', 'Periodic']);
  });

  it('a reset has CloudFront invalidated: the private API queues the request, a function outside the VPC may invalidate only this distribution', () => {
    const t = template('core');
    const [queueId, queue] = resourcesOf('core', 'AWS::SQS::Queue').find(([id]) => id.startsWith('CdnPurgeQueue'))!;
    assert.equal(queue.Properties.MessageRetentionPeriod, 60, 'no purge after a cached answer from before the reset has expired');
    assert.equal(queue.Properties.VisibilityTimeout, 20);
    assert.equal(queue.Properties.SqsManagedSseEnabled, true);
    const [purgeId, purge] = resourcesOf('core', 'AWS::Lambda::Function').find(([id]) => id.startsWith('CdnPurgeFunction'))!;
    assert.equal(purge.Properties.VpcConfig, undefined, 'CloudFront’s API is not reachable from the VPC');
    const [distributionId] = resourcesOf('core', 'AWS::CloudFront::Distribution')[0]!;
    assert.deepEqual(purge.Properties.Environment.Variables.DISTRIBUTION_ID, { Ref: distributionId });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { Ref: purgeId },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const purgeActions = functionStatements('core', 'CdnPurgeFunction').flatMap((st) => [st.Action].flat());
    assert.deepEqual(
      purgeActions.filter((a: string) => !a.startsWith('sqs:')).sort(),
      ['cloudfront:CreateInvalidation'],
    );
    const invalidate = functionStatements('core', 'CdnPurgeFunction').find((st) => st.Action === 'cloudfront:CreateInvalidation')!;
    assert.match(JSON.stringify(invalidate.Resource), new RegExp(`distribution/.*${distributionId}`));
    const [, privateFn] = roomFunctions().find(([id]) => id.startsWith('PrivateApiFunction'))!;
    assert.deepEqual(privateFn.Properties.Environment.Variables.CDN_PURGE_QUEUE_URL, { Ref: queueId });
    const send = functionStatements('core', 'PrivateApiFunction').find((st) => [st.Action].flat().includes('sqs:SendMessage'))!;
    assert.deepEqual(send.Resource, { 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('the token table is granted exactly the adapter’s calls: no Scan, batch or delete; the metrics job only queries', () => {
    const tableActions = (prefix: string) => [
      ...new Set(
        functionStatements('core', prefix)
          .flatMap((st) => [st.Action].flat())
          .filter((a: string) => a.startsWith('dynamodb:')),
      ),
    ].sort();
    // On the table, and Query alone on its one index, named (no `index/*`).
    const onIndex = (prefix: string) =>
      functionStatements('core', prefix).filter((st) => JSON.stringify(st.Resource).includes('/index/')).map((st) => [st.Action, st.Resource['Fn::Join'][1][1]]);
    for (const prefix of ['PublicApiFunction', 'PrivateApiFunction', 'MetricsJobFunction', 'AdmissionJobFunction']) {
      assert.deepEqual(onIndex(prefix), [['dynamodb:Query', `/index/${TOKEN_TABLE.expiryIndex}`]], prefix);
    }
    const adapter = ['dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'];
    assert.deepEqual(tableActions('PublicApiFunction'), adapter);
    assert.deepEqual(tableActions('PrivateApiFunction'), adapter);
    assert.deepEqual(tableActions('MetricsJobFunction'), ['dynamodb:Query']);
    assert.deepEqual(tableActions('IntakeConsumerFunction'), []);
    assert.deepEqual(tableActions('ExpiryJobFunction'), []);
  });

  it('one invoke permission per API function, not two per method (a function policy holds 20 KB)', () => {
    const permissions = (key: TemplateKey) => resourcesOf(key, 'AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com');
    assert.equal(permissions('core').length, 2);
    assert.equal(permissions('openid').length, 1);
    for (const [, p] of permissions('core')) assert.match(JSON.stringify(p.Properties.SourceArn), /\/\*\/\*\/\*/);
  });

  it('ValidityPeriod, QueuePositionExpiryPeriod and RedisPort only admit values the functions accept at start', () => {
    for (const key of ['core', 'gettingStarted'] as const) {
      const parameters = json(key).Parameters as Record<string, Json>;
      for (const [name, min, max] of [['ValidityPeriod', 1, 31_536_000], ['QueuePositionExpiryPeriod', 1, 31_536_000], ['RedisPort', 1, 65_535]] as const) {
        assert.deepEqual([parameters[name]!.MinValue, parameters[name]!.MaxValue], [min, max], `${key} ${name}`);
      }
    }
    const env = { EVENT_ID: 'Sample', REDIS_HOST: 'redis' };
    assert.throws(() => awsConfigFromEnv({ ...env, VALIDITY_PERIOD: '0' }), /VALIDITY_PERIOD/);
    assert.throws(() => awsConfigFromEnv({ ...env, QUEUE_POSITION_EXPIRY_PERIOD: '0' }), /QUEUE_POSITION_EXPIRY_PERIOD/);
    assert.throws(() => awsConfigFromEnv({ ...env, REDIS_PORT: '65536' }), /REDIS_PORT/);
    assert.equal(awsConfigFromEnv({ ...env, VALIDITY_PERIOD: '31536000', QUEUE_POSITION_EXPIRY_PERIOD: '1', REDIS_PORT: '1' }).event.validity_period, 31_536_000);
  });

  it('sample API: GET and POST on each /store operation (the page buys with a POST) behind the authorizer; refusals carry CORS', () => {
    const methods = resourcesOf('sample', 'AWS::ApiGateway::Method').map(([, m]) => m.Properties);
    const guarded = methods.filter((m) => m.AuthorizationType === 'CUSTOM');
    assert.deepEqual(guarded.map((m) => m.HttpMethod).sort(), ['GET', 'GET', 'GET', 'POST', 'POST', 'POST']);
    const responses = resourcesOf('sample', 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
    assert.deepEqual(responses.map((r) => r.ResponseType).sort(), ['DEFAULT_4XX', 'DEFAULT_5XX']);
    for (const r of responses) assert.equal(r.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin'], "'*'");
    // The operations of the self-hosted sample store (src/web/shop-api.ts), no more, no less.
    const paths = resourcesOf('sample', 'AWS::ApiGateway::Resource').map(([, r]) => r.Properties.PathPart).filter((p) => p !== 'store');
    assert.deepEqual(paths.sort(), [...SHOP_OPERATIONS].sort());
  });

  it('`cdk deploy` sees every stack: the CDK CLI’s way of running deploy/aws/cdk-app.ts writes all of them to the assembly', () => {
    const cliOut = mkdtempSync(join(tmpdir(), 'anteroom-cdk-cli-'));
    try {
      execFileSync(process.execPath, [fileURLToPath(new URL('../../deploy/aws/cdk-app.ts', import.meta.url))], {
        env: { ...process.env, CDK_OUTDIR: cliOut, CDK_CONTEXT_JSON: '{}' },
        stdio: 'ignore',
      });
      const manifest = JSON.parse(readFileSync(join(cliOut, 'manifest.json'), 'utf8')) as { artifacts: Record<string, { type: string }> };
      const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === 'aws:cloudformation:stack').map(([name]) => name);
      assert.deepEqual(stacks.sort(), Object.values(TEMPLATE_NAMES).sort());
    } finally {
      rmSync(cliOut, { recursive: true, force: true });
    }
  });

  it('logging at least VWR’s: CloudFront and S3 access logs, VPC flow log, access and execution logs on every stage, all kept for a set time', () => {
    const stacksWithStages = ['core', 'openid', 'sample'] as const;
    for (const key of stacksWithStages) {
      const resources = json(key).Resources as Record<string, Json>;
      const stages = resourcesOf(key, 'AWS::ApiGateway::Stage');
      assert.ok(stages.length >= 1, key);
      for (const [id, stage] of stages) {
        // Access logs: to a log group of the stack. Execution logs: ERROR for every method.
        const destination = stage.Properties.AccessLogSetting?.DestinationArn;
        assert.equal(resources[destination?.['Fn::GetAtt']?.[0]]?.Type, 'AWS::Logs::LogGroup', `${key} ${id} access logs`);
        assert.deepEqual(stage.Properties.MethodSettings.map((m: Json) => [m.HttpMethod, m.ResourcePath, m.LoggingLevel]), [['*', '/*', 'ERROR']], `${key} ${id}`);
        // The execution log group, made beforehand with a retention, named as API Gateway names it.
        const apiId = stage.Properties.RestApiId.Ref;
        const execution = [stage.DependsOn ?? []].flat().map((dep: string) => resources[dep]).find((r) => r?.Type === 'AWS::Logs::LogGroup');
        assert.ok(execution, `${key} ${id}: waits for its execution log group`);
        assert.equal(evaluate(execution.Properties.LogGroupName), `API-Gateway-Execution-Logs_<${apiId}>/${stage.Properties.StageName}`);
      }
      // CloudFront access logs to the stack's own logs bucket.
      for (const [id, distribution] of resourcesOf(key, 'AWS::CloudFront::Distribution')) {
        const logging = distribution.Properties.DistributionConfig.Logging;
        assert.ok(logging, `${key} ${id}: CloudFront access logs`);
        const bucket = resources[logging.Bucket['Fn::GetAtt'][0]] as Json;
        assert.equal(bucket.Type, 'AWS::S3::Bucket');
        assert.equal(bucket.Properties.OwnershipControls.Rules[0].ObjectOwnership, 'BucketOwnerPreferred', 'CloudFront writes logs with an ACL');
        assert.ok(bucket.Properties.LifecycleConfiguration.Rules.some((r: Json) => r.ExpirationInDays === 90), 'logs expire');
      }
    }
    // S3 server access logs of every content bucket (the buckets that are not themselves logs buckets).
    for (const key of ['openid', 'sample'] as const) {
      const buckets = resourcesOf(key, 'AWS::S3::Bucket').filter(([id]) => !id.startsWith('AccessLogsBucket'));
      assert.equal(buckets.length, 1, key);
      for (const [id, bucket] of buckets) {
        assert.equal(bucket.Properties.LoggingConfiguration?.LogFilePrefix, 's3/', `${key} ${id}`);
        assert.match(JSON.stringify(bucket.Properties.LoggingConfiguration.DestinationBucketName), /AccessLogsBucket/);
      }
    }
    // The VPC flow log: all traffic of the core's VPC, to a log group.
    const flowLogs = resourcesOf('core', 'AWS::EC2::FlowLog');
    assert.equal(flowLogs.length, 1);
    assert.equal(flowLogs[0]![1].Properties.TrafficType, 'ALL');
    assert.equal(flowLogs[0]![1].Properties.ResourceType, 'VPC');
    assert.equal(json('core').Resources[flowLogs[0]![1].Properties.LogGroupName.Ref].Type, 'AWS::Logs::LogGroup');
    // Every log group of every template has a retention.
    for (const key of Object.keys(TEMPLATE_NAMES) as TemplateKey[]) {
      for (const [id, group] of resourcesOf(key, 'AWS::Logs::LogGroup')) assert.equal(group.Properties.RetentionInDays, 30, `${key} ${id}`);
    }
  });

  it('flood limits: stage and usage-plan throttling, reserved concurrency where visitors reach Redis, bounded intake, optional WAF', () => {
    const throttled = (key: TemplateKey) =>
      resourcesOf(key, 'AWS::ApiGateway::Stage').map(([, stage]) => stage.Properties.MethodSettings.map((m: Json) => [m.ThrottlingRateLimit, m.ThrottlingBurstLimit])).flat();
    assert.deepEqual(throttled('core').sort((a: Json[], b: Json[]) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [
      [{ Ref: 'PrivateApiRateLimit' }, { Ref: 'PrivateApiBurstLimit' }],
      [{ Ref: 'PublicApiRateLimit' }, { Ref: 'PublicApiBurstLimit' }],
    ]);
    assert.deepEqual(throttled('openid'), [[{ Ref: 'ApiRateLimit' }, { Ref: 'ApiBurstLimit' }]]);
    assert.deepEqual(throttled('sample'), [[100, 200]]);
    const [, plan] = resourcesOf('core', 'AWS::ApiGateway::UsagePlan')[0]!;
    assert.deepEqual(plan.Properties.Throttle, { BurstLimit: { Ref: 'PublicApiBurstLimit' }, RateLimit: { Ref: 'PublicApiRateLimit' } });
    // Reserved concurrency: the parameter, or none when it is 0.
    const reserved = (key: TemplateKey, prefix: string) => resourcesOf(key, 'AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))![1].Properties.ReservedConcurrentExecutions;
    for (const [key, prefix, parameter] of [['core', 'PublicApiFunction', 'PublicApiReservedConcurrency'], ['core', 'PrivateApiFunction', 'PrivateApiReservedConcurrency'], ['openid', 'APIHandler', 'ReservedConcurrency']] as const) {
      const value = reserved(key, prefix);
      assert.deepEqual(value['Fn::If'].slice(1), [{ Ref: 'AWS::NoValue' }, { Ref: parameter }], `${key} ${prefix}`);
      assert.deepEqual(json(key).Conditions[value['Fn::If'][0]], { 'Fn::Equals': [{ Ref: parameter }, 0] });
    }
    // The intake consumer: at most INTAKE_CONSUMERS batches at once.
    const intake = resourcesOf('core', 'AWS::Lambda::EventSourceMapping').find(([, m]) => m.Properties.BatchSize === 500)!;
    assert.deepEqual(intake[1].Properties.ScalingConfig, { MaximumConcurrency: INTAKE_CONSUMERS });
    // WAF: a rate-based rule per client IP, made only when WafRateLimit is not 0; CloudFront's only in us-east-1.
    for (const [key, scope] of [['core', 'CLOUDFRONT'], ['openid', 'REGIONAL']] as const) {
      const [aclId, acl] = resourcesOf(key, 'AWS::WAFv2::WebACL')[0]!;
      assert.equal(acl.Properties.Scope, scope);
      assert.deepEqual(json(key).Conditions[acl.Condition], { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'WafRateLimit' }, 0] }] });
      const rule = acl.Properties.Rules[0].Statement.RateBasedStatement;
      assert.deepEqual([rule.Limit, rule.AggregateKeyType], [{ Ref: 'WafRateLimit' }, 'IP']);
      assert.equal(acl.Properties.Rules[0].Action.Block !== undefined, true);
      if (key === 'core') {
        const [, distribution] = resourcesOf('core', 'AWS::CloudFront::Distribution')[0]!;
        assert.deepEqual(distribution.Properties.DistributionConfig.WebACLId['Fn::If'].slice(0, 2), [acl.Condition, { 'Fn::GetAtt': [aclId, 'Arn'] }]);
        assert.deepEqual(json('core').Rules.WafNeedsUsEast1.Assertions[0].Assert, { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
      } else {
        const [, association] = resourcesOf('openid', 'AWS::WAFv2::WebACLAssociation')[0]!;
        assert.equal(association.Condition, acl.Condition);
        assert.deepEqual(association.Properties.WebACLArn, { 'Fn::GetAtt': [aclId, 'Arn'] });
      }
    }
  });

  it('the CloudFormation validator shipped with aws-cdk-lib finds no error in any template', () => {
    const report = join(outdir, 'validation-report.json');
    const violations = existsSync(report)
      ? (JSON.parse(readFileSync(report, 'utf8')) as { pluginReports: Array<{ violations: Array<{ ruleName: string; severity: string; description: string }> }> })
          .pluginReports.flatMap((r) => r.violations)
      : [];
    assert.deepEqual(violations.filter((v) => v.severity === 'error').map((v) => `${v.ruleName} ${v.description}`), []);
  });

  it('the admission job idles cheaply: ADMISSION_JOB_MEMORY MB', () => {
    const [, fn] = resourcesOf('core', 'AWS::Lambda::Function').find(([id]) => id.startsWith('AdmissionJobFunction'))!;
    assert.equal(fn.Properties.MemorySize, ADMISSION_JOB_MEMORY);
  });

  it('migration safety: every table and bucket outlives its stack and any replacement (docs/aws.md, Migrating)', () => {
    let stateful = 0;
    for (const key of Object.keys(TEMPLATE_NAMES) as TemplateKey[]) {
      for (const type of ['AWS::DynamoDB::Table', 'AWS::S3::Bucket']) {
        for (const [id, resource] of resourcesOf(key, type)) {
          stateful++;
          assert.deepEqual([resource.DeletionPolicy, resource.UpdateReplacePolicy], ['Retain', 'Retain'], `${key} ${id}`);
        }
      }
    }
    assert.ok(stateful >= 6, `${stateful}`);
  });

  it('no function loads source maps at cold start (bench/lambda-cold-start.ts: they cost more than they give)', () => {
    let functions = 0;
    for (const key of Object.keys(TEMPLATE_NAMES) as TemplateKey[]) {
      for (const [id, fn] of resourcesOf(key, 'AWS::Lambda::Function')) {
        functions++;
        assert.doesNotMatch(JSON.stringify(fn.Properties.Environment ?? {}), /enable-source-maps|NODE_OPTIONS/, `${key} ${id}`);
      }
    }
    assert.ok(functions >= 12, `${functions} functions`);
  });

  it('the committed templates are what `npm run synth` writes now (deterministic, no asset hashes)', () => {
    for (const name of Object.values(TEMPLATE_NAMES)) {
      const committed = JSON.parse(readFileSync(new URL(`../../deploy/aws/templates/${name}.template.json`, import.meta.url), 'utf8'));
      assert.deepEqual(committed, assembly.getStackByName(name).template, `${name}: run npm run synth`);
      assert.doesNotMatch(JSON.stringify(committed), /cdk-hnb659fds|AssetParameters|aws:asset:/, name);
    }
  });
});
