// The core stack (VWR's virtual-waiting-room-on-aws template): public and private REST APIs and everything
// behind them, running Anteroom's TypeScript core in Lambda.
//
//   CloudFront ──(x-api-key origin header, per-path cache policies)──▶ public REST API ──▶ PublicApi λ ──▶ SQS intake
//                                                                                                            │ (DLQ)
//   IAM-signed callers (ProtectedAPIGroup) ──▶ private REST API ──▶ PrivateApi λ              IntakeConsumer λ
//   EventBridge schedules ──▶ ExpiryJob λ, MetricsJob λ, AdmissionJob λ                                    │
//   every λ above: in the VPC ──▶ ElastiCache for Redis (TLS + AUTH) — counters, positions, history
//                               ──▶ DynamoDB (token records, sessions), Secrets Manager (signing keys),
//                                   EventBridge bus (events) — through VPC endpoints, no internet egress.

import { Aws, CfnCondition, CfnOutput, CfnRule, Duration, Fn, RemovalPolicy, SecretValue, Stack, type StackProps } from 'aws-cdk-lib';
import {
  EndpointType,
  GatewayResponse,
  LambdaIntegration,
  ResponseType,
  RestApi,
  AuthorizationType,
  ApiKeySourceType,
} from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods,
  CachePolicy,
  CacheQueryStringBehavior,
  CacheHeaderBehavior,
  CacheCookieBehavior,
  Distribution,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
  CachedMethods,
  type BehaviorOptions,
  type CfnDistribution,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { CfnReplicationGroup, CfnSubnetGroup } from 'aws-cdk-lib/aws-elasticache';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Effect, Group, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { EVENT_ID_PATTERN } from '../../../src/domain/room-settings.ts';
import { TOKEN_TABLE } from '../../../src/store/dynamodb/token-table.ts';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { PRIVATE_API_URL } from '../../../src/aws/core-settings.ts';
import { CORE_SETTING_NAMES, PORT_RANGE, SECONDS_RANGE, type CoreSettingName } from '../../../src/aws/environment.ts';
import {
  accessLogsBucket,
  alarmAboveZero,
  conditionAll,
  coreLimitParameters,
  executionLogGroup,
  functionAlarms,
  isTrue,
  loggedStage,
  logGroup,
  numberParameter,
  rateLimitAcl,
  reservedConcurrency,
  signingKeysAccess,
  stringParameter,
  grantTokenTable,
  TOKEN_TABLE_ACTIONS,
  TOKEN_TABLE_QUERY,
  TRUE_FALSE,
  webAclArnParameter,
} from './common.ts';
import { exportCoreValues } from './core-exports.ts';

/** VWR's API stage name: the invoke URLs end in /api. */
export const STAGE = 'api';

/** Public routes and their methods (every path also answers OPTIONS, unauthenticated). */
export const PUBLIC_ROUTES = {
  assign_queue_num: 'POST',
  queue_num: 'GET',
  serving_num: 'GET',
  waiting_num: 'GET',
  generate_token: 'POST',
  public_key: 'GET',
  'jwks.json': 'GET',
  queue_pos_expiry: 'GET',
  leave_queue: 'POST',
  draw: 'GET',
} as const;

export const PRIVATE_ROUTES = {
  generate_token: 'POST',
  increment_serving_counter: 'POST',
  num_active_tokens: 'GET',
  expired_tokens: 'GET',
  update_session: 'POST',
  reset_initial_state: 'POST',
  draw_positions: 'GET',
} as const;

/** The rooms API (docs/rooms.md): resource paths and their methods, served by the private API function too. */
export const PRIVATE_ROOM_ROUTES = {
  rooms: ['GET'],
  'rooms/{event_id}': ['GET', 'PUT', 'PATCH', 'DELETE'],
  // What the control panel shows of a room (docs/rooms.md "Control panel").
  'rooms/{event_id}/figures': ['GET'],
  // The after-event report (docs/operations.md "After-event reports"), from the history job's samples.
  'rooms/{event_id}/report': ['GET'],
} as const;

/**
 * CloudFront cache policies per path, in seconds. The functions answer with Cache-Control (spec: polling
 * paths max-age=1, a 200 of /queue_num 60, keys 300, everything else no-store) and CloudFront honours it
 * between minTtl and maxTtl; defaultTtl applies only to an answer without Cache-Control.
 */
export const CACHE_POLICIES = {
  poll: { paths: ['/serving_num', '/waiting_num'], query: ['event_id'], minTtl: 0, defaultTtl: 1, maxTtl: 5 },
  // The draw's pages (GET /draw?page=N) are cached apart: a large draw is served page by page on Lambda.
  draw: { paths: ['/draw'], query: ['event_id', 'page'], minTtl: 0, defaultTtl: 1, maxTtl: 5 },
  expiry: { paths: ['/queue_pos_expiry'], query: ['event_id', 'request_id'], minTtl: 0, defaultTtl: 1, maxTtl: 5 },
  queue: { paths: ['/queue_num'], query: ['event_id', 'request_id'], minTtl: 0, defaultTtl: 0, maxTtl: 60 },
  key: { paths: ['/public_key', '/jwks.json'], query: ['event_id'], minTtl: 0, defaultTtl: 300, maxTtl: 300 },
} as const;

/** Memory of the admission job function, MB: a tick is a few Redis calls, the rest of the minute is waiting. */
export const ADMISSION_JOB_MEMORY = 256;

/** Intake consumers at once (the SQS event source's maximum concurrency): each numbers up to 500 joins a batch. */
export const INTAKE_CONSUMERS = 5;

export interface CoreStackProps extends StackProps {
  code: CodeSource;
  /** ElastiCache node type. Default cache.r7g.large (see docs/aws.md, cost notes). */
  redisNodeType?: string;
}

export class CoreStack extends Stack {
  constructor(scope: Construct, id: string, props: CoreStackProps) {
    super(scope, id, props);
    this.templateOptions.description =
      'Anteroom - Virtual Waiting Room on AWS, core: public and private REST APIs, Redis, DynamoDB, EventBridge (Lambda, TypeScript)';

    // ---- parameters: VWR's names and defaults ----
    const eventId = stringParameter(this, 'EventId', 'Unique ID for this instance of the waiting room', {
      minLength: 1,
      allowedPattern: EVENT_ID_PATTERN,
      constraintDescription: 'Letters, digits and . _ ~ - (at most 128).',
    });
    const validityPeriod = numberParameter(this, 'ValidityPeriod', 'Token validity period in seconds', 3600, SECONDS_RANGE);
    const enableEvents = stringParameter(this, 'EnableEventsGeneration', 'If set to true, metrics related to the Waiting Room will be written to its event bus every minute', { allowedValues: TRUE_FALSE, default: 'false' });
    const redisPort = numberParameter(this, 'RedisPort', 'Port to use when connecting to Redis', 1785, PORT_RANGE);
    const enableExpiry = stringParameter(this, 'EnableQueuePositionExpiry', 'If set to false, expiry period is not applied to queue position', { allowedValues: TRUE_FALSE, default: 'true' });
    const expiryPeriod = numberParameter(this, 'QueuePositionExpiryPeriod', 'Time in seconds after which a served queue position that claimed no token can no longer obtain one', 900, SECONDS_RANGE);
    const incrOnExpiry = stringParameter(this, 'IncrSvcOnQueuePositionExpiry', 'If set to true, serving counter is automatically advanced based on expired queue positions', { allowedValues: TRUE_FALSE, default: 'false' });
    // Flood limits (not VWR's; defaults in common.ts): stage throttling, reserved concurrency, optional WAF.
    const limits = coreLimitParameters(this);
    const webAclArn = webAclArnParameter(this);
    const eventsOn = isTrue(this, 'GenerateWaitingRoomEvents', enableEvents);
    const expiryOn = isTrue(this, 'SetQueuePositionExpiredEvents', enableExpiry);

    // ---- network: isolated subnets in two AZs; AWS services through VPC endpoints ----
    const vpc = new Vpc(this, 'WaitingRoomVpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      gatewayEndpoints: { DynamoDbEndpoint: { service: GatewayVpcEndpointAwsService.DYNAMODB } },
    });
    // VPC flow log (VWR had one): all traffic, to CloudWatch Logs.
    vpc.addFlowLog('FlowLog', { destination: FlowLogDestination.toCloudWatchLogs(logGroup(this, 'VpcFlowLogGroup')), trafficType: FlowLogTrafficType.ALL });
    const functionsSg = new SecurityGroup(this, 'FunctionSecurityGroup', { vpc, description: 'Anteroom functions', allowAllOutbound: true });
    for (const [name, service] of [
      ['SqsEndpoint', InterfaceVpcEndpointAwsService.SQS],
      ['SecretsManagerEndpoint', InterfaceVpcEndpointAwsService.SECRETS_MANAGER],
      ['EventBridgeEndpoint', InterfaceVpcEndpointAwsService.EVENTBRIDGE],
    ] as const) {
      // HTTPS from the functions' security group only (the OpenID stack's function has it too), not from the
      // whole VPC range (the CDK's default).
      const endpoint = vpc.addInterfaceEndpoint(name, { service, privateDnsEnabled: true, subnets: { subnetType: SubnetType.PRIVATE_ISOLATED }, open: false });
      endpoint.connections.allowFrom(functionsSg, Port.tcp(443), 'Anteroom functions');
    }

    // ---- ElastiCache for Redis: TLS in transit, AUTH token from Secrets Manager, Multi-AZ ----
    const redisAuth = new Secret(this, 'RedisAuthToken', {
      description: 'ElastiCache AUTH token of the waiting room',
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'password', excludePunctuation: true, passwordLength: 64 },
    });
    const redisSg = new SecurityGroup(this, 'RedisSecurityGroup', { vpc, description: 'Anteroom Redis', allowAllOutbound: false });
    redisSg.addIngressRule(functionsSg, Port.tcp(redisPort.valueAsNumber), 'Anteroom functions');
    const subnetGroup = new CfnSubnetGroup(this, 'RedisSubnetGroup', {
      description: 'Anteroom Redis subnets',
      subnetIds: vpc.isolatedSubnets.map((s) => s.subnetId),
    });
    const redis = new CfnReplicationGroup(this, 'RedisReplicationGroup', {
      replicationGroupDescription: 'Anteroom counters, positions and serving history',
      engine: 'redis',
      engineVersion: '7.1',
      cacheNodeType: props.redisNodeType ?? 'cache.r7g.large',
      numCacheClusters: 2,
      automaticFailoverEnabled: true,
      multiAzEnabled: true,
      port: redisPort.valueAsNumber,
      cacheSubnetGroupName: subnetGroup.ref,
      securityGroupIds: [redisSg.securityGroupId],
      transitEncryptionEnabled: true,
      atRestEncryptionEnabled: true,
      authToken: redisAuth.secretValueFromJson('password').unsafeUnwrap(),
      snapshotRetentionLimit: 1,
    });

    // ---- DynamoDB: token records and sessions (layout: src/store/dynamodb/token-table.ts) ----
    const table = new Table(this, 'TokenTable', {
      partitionKey: { name: TOKEN_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TOKEN_TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TOKEN_TABLE.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    table.addGlobalSecondaryIndex({
      indexName: TOKEN_TABLE.expiryIndex,
      partitionKey: { name: TOKEN_TABLE.expiryIndexPartitionKey, type: AttributeType.STRING },
      sortKey: { name: TOKEN_TABLE.expiryIndexSortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: ['status'],
    });

    // ---- SQS intake of joins, with a dead-letter queue ----
    const deadLetters = new Queue(this, 'WaitingRoomDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const intakeQueue = new Queue(this, 'WaitingRoomQueue', {
      // Six times the consumer's timeout (AWS's advice for Lambda event sources).
      visibilityTimeout: Duration.seconds(180),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The consumer is idempotent per request ID, so a redelivery is harmless; give transient failures room.
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
    });

    // ---- EventBridge bus for the events ----
    const bus = new EventBus(this, 'WaitingRoomEventBus', { eventBusName: Fn.join('-', [Aws.STACK_NAME, 'events']) });

    // ---- the REST APIs (created first: the functions need their IDs for the token issuer) ----
    const accessLogs = logGroup(this, 'ApiAccessLogGroup');
    const publicThrottling = { rate: limits.PublicApiRateLimit.valueAsNumber, burst: limits.PublicApiBurstLimit.valueAsNumber };
    const privateThrottling = { rate: limits.PrivateApiRateLimit.valueAsNumber, burst: limits.PrivateApiBurstLimit.valueAsNumber };
    const publicApi = new RestApi(this, 'PublicWaitingRoomApi', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'public']) as string,
      description: 'Anteroom public API (behind CloudFront)',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: loggedStage(STAGE, accessLogs, publicThrottling),
      cloudWatchRole: false,
      apiKeySourceType: ApiKeySourceType.HEADER,
    });
    const privateApi = new RestApi(this, 'PrivateWaitingRoomApi', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'private']) as string,
      description: 'Anteroom private API (IAM authentication)',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: loggedStage(STAGE, accessLogs, privateThrottling),
      cloudWatchRole: false,
    });
    // RestApi adds an "Endpoint" output of its own; the outputs below are VWR's.
    publicApi.node.tryRemoveChild('Endpoint');
    privateApi.node.tryRemoveChild('Endpoint');
    executionLogGroup(this, 'PublicApiExecutionLogs', publicApi, STAGE);
    executionLogGroup(this, 'PrivateApiExecutionLogs', privateApi, STAGE);
    const apiUrl = (api: RestApi) => Fn.join('', ['https://', api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX, `/${STAGE}`]);
    const publicIssuer = apiUrl(publicApi);
    const privateIssuer = apiUrl(privateApi);

    // ---- functions ----
    const signingKeysPrefix = Fn.join('', [Aws.STACK_NAME, '/anteroom/signing-keys/']);
    const environment: Record<CoreSettingName, string> = {
      EVENT_ID: eventId.valueAsString,
      VALIDITY_PERIOD: validityPeriod.valueAsString,
      ENABLE_EVENTS_GENERATION: enableEvents.valueAsString,
      ENABLE_QUEUE_POSITION_EXPIRY: enableExpiry.valueAsString,
      QUEUE_POSITION_EXPIRY_PERIOD: expiryPeriod.valueAsString,
      INCR_SVC_ON_QUEUE_POSITION_EXPIRY: incrOnExpiry.valueAsString,
      ISSUER: publicIssuer,
      REDIS_HOST: redis.attrPrimaryEndPointAddress,
      REDIS_PORT: redis.attrPrimaryEndPointPort,
      REDIS_TLS: 'true',
      REDIS_AUTH_SECRET_ARN: redisAuth.secretArn,
      TOKEN_TABLE_NAME: table.tableName,
      EVENT_BUS_NAME: bus.eventBusName,
      SIGNING_KEYS_SECRET_PREFIX: signingKeysPrefix,
    };
    const signingKeys = signingKeysAccess(signingKeysPrefix);
    const makeFunction = (name: string, bundle: string, handler: string, timeout: number, extraEnv: Record<string, string> = {}, memorySize = 1024) => {
      const fn = new LambdaFn(this, name, {
        description: `Anteroom ${name}`,
        runtime: Runtime.NODEJS_24_X,
        architecture: Architecture.ARM_64,
        handler: `index.${handler}`,
        code: lambdaCode(this, bundle, props.code),
        memorySize,
        timeout: Duration.seconds(timeout),
        vpc,
        vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
        securityGroups: [functionsSg],
        environment: { ...environment, ...extraEnv },
        logGroup: logGroup(this, `${name}Logs`),
      });
      // Every function opens the runtime: Redis AUTH, and the signing key (created by the first one to start).
      redisAuth.grantRead(fn);
      fn.addToRolePolicy(signingKeys);
      functionAlarms(this, name, fn);
      return fn;
    };

    const publicFn = makeFunction('PublicApiFunction', 'public-api', 'handler', 10, { INTAKE_QUEUE_URL: intakeQueue.queueUrl });
    // A flood of visitors reaches Redis through this function: cap how many run at once.
    reservedConcurrency(this, publicFn, limits.PublicApiReservedConcurrency);
    intakeQueue.grantSendMessages(publicFn);
    // The token table: exactly the adapter's calls (no Scan, no batch or delete), as in the OpenID stack.
    grantTokenTable(publicFn, table.tableArn, TOKEN_TABLE_ACTIONS);
    bus.grantPutEventsTo(publicFn);

    const privateFn = makeFunction('PrivateApiFunction', 'private-api', 'handler', 10);
    reservedConcurrency(this, privateFn, limits.PrivateApiReservedConcurrency);
    grantTokenTable(privateFn, table.tableArn, TOKEN_TABLE_ACTIONS);
    bus.grantPutEventsTo(privateFn);

    const consumerFn = makeFunction('IntakeConsumerFunction', 'intake-consumer', 'handler', 30);
    consumerFn.addEventSource(
      // At most INTAKE_CONSUMERS batches numbered at once: a flood of joins waits in the queue, not on Redis.
      new SqsEventSource(intakeQueue, { batchSize: 500, maxBatchingWindow: Duration.seconds(1), reportBatchItemFailures: true, maxConcurrency: INTAKE_CONSUMERS }),
    );

    const expiryFn = makeFunction('ExpiryJobFunction', 'jobs', 'expiry', 60);
    bus.grantPutEventsTo(expiryFn);
    const expiryRule = new Rule(this, 'ExpiryJobSchedule', { schedule: Schedule.rate(Duration.minutes(1)), targets: [new LambdaFunction(expiryFn)] });
    conditionAll(expiryRule, expiryOn);

    const metricsFn = makeFunction('MetricsJobFunction', 'jobs', 'metrics', 60);
    grantTokenTable(metricsFn, table.tableArn, TOKEN_TABLE_QUERY);
    bus.grantPutEventsTo(metricsFn);
    const metricsRule = new Rule(this, 'MetricsJobSchedule', { schedule: Schedule.rate(Duration.minutes(1)), targets: [new LambdaFunction(metricsFn)] });
    conditionAll(metricsRule, eventsOn);

    // Automatic admission ticks every second, more often than a schedule fires: each invocation runs a minute's
    // ticks, each claimed through the job lock in Redis (src/aws/jobs.ts). Active sessions are counted in DynamoDB.
    // It returns at once while no room is automatic (or off); running, it mostly waits: ADMISSION_JOB_MEMORY MB.
    const admissionFn = makeFunction('AdmissionJobFunction', 'jobs', 'admission', 90, {}, ADMISSION_JOB_MEMORY);
    grantTokenTable(admissionFn, table.tableArn, TOKEN_TABLE_QUERY);
    bus.grantPutEventsTo(admissionFn);
    new Rule(this, 'AdmissionJobSchedule', { schedule: Schedule.rate(Duration.minutes(1)), targets: [new LambdaFunction(admissionFn)] });
    // The draw of rooms with shuffle_at_event_start (src/domain/draw-runner.ts): at the first minute at or after
    // the start; resumable, so a draw cut off by the timeout continues at the next invocation.
    const drawFn = makeFunction('DrawJobFunction', 'jobs', 'draw', 300);
    new Rule(this, 'DrawJobSchedule', { schedule: Schedule.rate(Duration.minutes(1)), targets: [new LambdaFunction(drawFn)] });
    // Every room's counters once a minute into its history (GET /private/rooms/{id}/report). Active sessions are
    // counted in DynamoDB.
    const historyFn = makeFunction('HistoryJobFunction', 'jobs', 'history', 60);
    grantTokenTable(historyFn, table.tableArn, TOKEN_TABLE_QUERY);
    new Rule(this, 'HistoryJobSchedule', { schedule: Schedule.rate(Duration.minutes(1)), targets: [new LambdaFunction(historyFn)] });

    // ---- API resources: one per VWR path, each with an OPTIONS method for CORS preflights ----
    for (const api of [publicApi, privateApi]) {
      new GatewayResponse(this, `${api.node.id}Default4xx`, { restApi: api, type: ResponseType.DEFAULT_4XX, responseHeaders: { 'Access-Control-Allow-Origin': "'*'" } });
      new GatewayResponse(this, `${api.node.id}Default5xx`, { restApi: api, type: ResponseType.DEFAULT_5XX, responseHeaders: { 'Access-Control-Allow-Origin': "'*'" } });
    }
    // One invoke permission per function for the whole API, not two per method: a function's resource policy
    // is limited to 20 KB, and one per method (32 for the public API) comes close with a long stack name.
    const publicIntegration = new LambdaIntegration(publicFn, { scopePermissionToMethod: false });
    for (const [path, method] of Object.entries(PUBLIC_ROUTES)) {
      const resource = publicApi.root.addResource(path);
      // CloudFront adds x-api-key; a caller that bypasses it is refused by API Gateway (403).
      resource.addMethod(method, publicIntegration, { apiKeyRequired: true });
      resource.addMethod('OPTIONS', publicIntegration);
    }
    const privateIntegration = new LambdaIntegration(privateFn, { scopePermissionToMethod: false });
    for (const [path, method] of Object.entries(PRIVATE_ROUTES)) {
      const resource = privateApi.root.addResource(path);
      resource.addMethod(method, privateIntegration, { authorizationType: AuthorizationType.IAM });
      resource.addMethod('OPTIONS', privateIntegration, { authorizationType: AuthorizationType.NONE });
    }
    for (const [path, methods] of Object.entries(PRIVATE_ROOM_ROUTES)) {
      const resource = privateApi.root.resourceForPath(path);
      for (const method of methods) resource.addMethod(method, privateIntegration, { authorizationType: AuthorizationType.IAM });
      resource.addMethod('OPTIONS', privateIntegration, { authorizationType: AuthorizationType.NONE });
    }

    // The origin key: generated at deployment, never in the template's text.
    const originKey = new Secret(this, 'PublicApiOriginKey', {
      description: 'x-api-key CloudFront sends to the public API',
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'key', excludePunctuation: true, passwordLength: 40 },
    });
    const originKeyValue = originKey.secretValueFromJson('key').unsafeUnwrap();
    const apiKey = publicApi.addApiKey('PublicApiKey', { value: originKeyValue, description: 'CloudFront origin key' });
    const usagePlan = publicApi.addUsagePlan('PublicUsagePlan', {
      description: 'CloudFront origin',
      throttle: { rateLimit: publicThrottling.rate, burstLimit: publicThrottling.burst },
      apiStages: [{ api: publicApi, stage: publicApi.deploymentStage }],
    });
    usagePlan.addApiKey(apiKey);

    // ---- CloudFront in front of the public API, with a cache policy per path ----
    const origin = new HttpOrigin(Fn.join('', [publicApi.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX]), {
      originPath: `/${STAGE}`,
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      customHeaders: { 'x-api-key': originKeyValue },
    });
    const additionalBehaviors: Record<string, BehaviorOptions> = {};
    for (const [name, policy] of Object.entries(CACHE_POLICIES)) {
      const cachePolicy = new CachePolicy(this, `${name[0]!.toUpperCase()}${name.slice(1)}CachePolicy`, {
        cachePolicyName: Fn.join('-', [Aws.STACK_NAME, name]),
        comment: `Anteroom ${policy.paths.join(', ')}`,
        minTtl: Duration.seconds(policy.minTtl),
        defaultTtl: Duration.seconds(policy.defaultTtl),
        maxTtl: Duration.seconds(policy.maxTtl),
        queryStringBehavior: CacheQueryStringBehavior.allowList(...policy.query),
        headerBehavior: CacheHeaderBehavior.none(),
        cookieBehavior: CacheCookieBehavior.none(),
        enableAcceptEncodingGzip: true,
        enableAcceptEncodingBrotli: true,
      });
      for (const path of policy.paths) {
        additionalBehaviors[path] = {
          origin,
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
          cachedMethods: CachedMethods.CACHE_GET_HEAD,
          cachePolicy,
          compress: true,
        };
      }
    }
    const logs = accessLogsBucket(this);
    const distribution = new Distribution(this, 'PublicApiCloudFront', {
      comment: 'Anteroom public API',
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      additionalBehaviors,
    });
    // Optional WAF: a rate-based rule made here (us-east-1 only), or a web ACL made elsewhere, or none.
    const waf = rateLimitAcl(this, 'PublicApiWebAcl', limits.WafRateLimit, 'CLOUDFRONT');
    new CfnRule(this, 'WafNeedsUsEast1', {
      ruleCondition: waf.on.expression,
      assertions: [{
        assert: Fn.conditionEquals(Aws.REGION, 'us-east-1'),
        assertDescription: 'WafRateLimit needs the stack in us-east-1 (CloudFront web ACLs are made there). Elsewhere, set WafRateLimit to 0 and give WebACLArn.',
      }],
    });
    const hasAclArn = new CfnCondition(this, 'HasWebACLArn', { expression: Fn.conditionNot(Fn.conditionEquals(webAclArn.valueAsString, '')) });
    (distribution.node.defaultChild as CfnDistribution).addPropertyOverride(
      'DistributionConfig.WebACLId',
      Fn.conditionIf(waf.on.logicalId, waf.acl.attrArn, Fn.conditionIf(hasAclArn.logicalId, webAclArn.valueAsString, Aws.NO_VALUE)),
    );

    // ---- CDN purge after a reset (src/aws/cloudfront-purge.ts): the private API function, in the VPC, cannot
    // reach CloudFront's API; it puts the request on a queue, and a function outside the VPC invalidates ----
    const purgeQueue = new Queue(this, 'CdnPurgeQueue', {
      // Twice the function's timeout: a failed invalidation is tried again 20 s later...
      visibilityTimeout: Duration.seconds(20),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // ...but not after an answer cached before the reset has expired by itself (60 s at most: /queue_num).
      retentionPeriod: Duration.seconds(60),
    });
    const purgeFn = new LambdaFn(this, 'CdnPurgeFunction', {
      description: 'Anteroom CdnPurgeFunction',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: lambdaCode(this, 'cdn-purge', props.code),
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment: { DISTRIBUTION_ID: distribution.distributionId },
      logGroup: logGroup(this, 'CdnPurgeFunctionLogs'),
    });
    purgeFn.addEventSource(new SqsEventSource(purgeQueue, { batchSize: 10, reportBatchItemFailures: true }));
    purgeFn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['cloudfront:CreateInvalidation'], resources: [distribution.distributionArn] }),
    );
    functionAlarms(this, 'CdnPurgeFunction', purgeFn);
    purgeQueue.grantSendMessages(privateFn);
    privateFn.addEnvironment('CDN_PURGE_QUEUE_URL', purgeQueue.queueUrl);

    // ---- who may call the private API: members of this group (and roles given the same permission) ----
    const group = new Group(this, 'ProtectedAPIGroup');
    group.addToPolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['execute-api:Invoke'], resources: [privateApi.arnForExecuteApi('*', '/*', STAGE)] }),
    );

    // ---- alarms: 4xx/5xx per API (VWR's), dead letters waiting ----
    const minute = Duration.minutes(1);
    for (const [id, api] of [['PublicApi', publicApi], ['PrivateApi', privateApi]] as const) {
      alarmAboveZero(this, `${id}4xxAlarm`, api.metricClientError({ period: minute, statistic: 'Maximum' }), '4xx errors > 0');
      alarmAboveZero(this, `${id}5xxAlarm`, api.metricServerError({ period: minute, statistic: 'Maximum' }), '5xx errors > 0');
    }
    alarmAboveZero(
      this,
      'DeadLetterQueueAlarm',
      deadLetters.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
      'Joins in the dead-letter queue > 0 (visitors who were answered but never numbered)',
    );

    // ---- for stacks built on this one (the OpenID stack): the settings document and the exports ----
    // Secrets Manager rather than SSM Parameter Store: the functions' isolated subnets already reach it
    // through a VPC endpoint (keys, Redis AUTH); an SSM endpoint would cost more than this one document.
    const coreSettings = new Secret(this, 'CoreSettings', {
      description: 'Anteroom: settings of this waiting room for functions of stacks built on it (no secret values)',
      secretStringValue: SecretValue.unsafePlainText(
        // And the private API's URL, which an OpenID stack's PrivateAPIEndpoint must name (src/aws/core-settings.ts).
        this.toJsonString({ ...Object.fromEntries(CORE_SETTING_NAMES.map((name) => [name, environment[name]])), [PRIVATE_API_URL]: privateIssuer }),
      ),
    });
    exportCoreValues(this, eventId.valueAsString, {
      CoreSettingsSecretArn: coreSettings.secretArn,
      FunctionSubnetIds: Fn.join(',', vpc.isolatedSubnets.map((s) => s.subnetId)),
      FunctionSecurityGroupId: functionsSg.securityGroupId,
      RedisAuthSecretArn: redisAuth.secretArn,
      TokenTableArn: table.tableArn,
      EventBusArn: bus.eventBusArn,
      SigningKeysSecretPrefix: signingKeysPrefix,
      IntakeQueueArn: intakeQueue.queueArn,
      IntakeQueueUrl: intakeQueue.queueUrl,
    });

    // ---- outputs: VWR's names ----
    new CfnOutput(this, 'PublicApiInvokeURL', { value: Fn.join('', ['https://', distribution.distributionDomainName]), description: 'Public API Invoke URL' });
    new CfnOutput(this, 'PrivateApiInvokeURL', { value: privateIssuer, description: 'Private API Invoke URL' });
    new CfnOutput(this, 'PublicTokenIssuer', { value: publicIssuer, description: 'Public Token Issuer' });
    new CfnOutput(this, 'PrivateTokenIssuer', { value: privateIssuer, description: 'Private Token Issuer' });
    new CfnOutput(this, 'ProtectedAPIGroupName', { value: group.groupName, description: 'IAM group allowed to call the private API' });
    new CfnOutput(this, 'EventBusName', { value: bus.eventBusName, description: 'EventBridge bus receiving the waiting room events' });
    new CfnOutput(this, 'TokenTableName', { value: table.tableName, description: 'DynamoDB table of token records' });
    new CfnOutput(this, 'CoreStackName', { value: Aws.STACK_NAME, description: 'This stack\'s name' });
    new CfnOutput(this, 'DeadLetterQueueURL', { value: deadLetters.queueUrl, description: 'Joins that could not be numbered' });
  }
}
