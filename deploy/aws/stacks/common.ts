// Pieces every stack uses: VWR-style parameters, alarms, and conditions on whole constructs.

import { Aws, CfnCondition, CfnParameter, CfnResource, Duration, Fn, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AccessLogFormat, LogGroupLogDestination, MethodLoggingLevel, type RestApi, type StageOptions } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { Effect, PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction, Function as LambdaFn, IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { TOKEN_TABLE } from '../../../src/store/dynamodb/token-table.ts';

export const TRUE_FALSE = ['true', 'false'];

export function stringParameter(stack: Stack, name: string, description: string, extra: Partial<ConstructorParameters<typeof CfnParameter>[2]> = {}): CfnParameter {
  return new CfnParameter(stack, name, { type: 'String', description, ...extra });
}

/** A Number parameter; give `range` when the functions accept less than every number ≥ 0, so a value out of
 * their range (which they would refuse at cold start, answering 503 to everyone) is refused by CloudFormation
 * instead. CloudFormation's Number also takes fractions, which the functions refuse too: a range cannot say so. */
export function numberParameter(
  stack: Stack,
  name: string,
  description: string,
  defaultValue: number,
  range: { min: number; max?: number } = { min: 0 },
): CfnParameter {
  return new CfnParameter(stack, name, {
    type: 'Number',
    description,
    default: defaultValue,
    minValue: range.min,
    ...(range.max !== undefined ? { maxValue: range.max } : {}),
  });
}

export function isTrue(stack: Stack, id: string, parameter: CfnParameter): CfnCondition {
  return new CfnCondition(stack, id, { expression: Fn.conditionEquals(parameter.valueAsString, 'true') });
}

/** VWR's alarm shape: the metric's maximum over one minute above 0, missing data is fine. */
export function alarmAboveZero(scope: Construct, id: string, metric: IMetric, description: string): Alarm {
  return new Alarm(scope, id, {
    metric,
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

/** Errors > 0 and Throttles > 0 alarms of a function (VWR had both for every function). */
export function functionAlarms(scope: Construct, id: string, fn: IFunction): Alarm[] {
  const period = Duration.minutes(1);
  return [
    alarmAboveZero(scope, `${id}ErrorsAlarm`, fn.metricErrors({ period, statistic: 'Maximum' }), 'Errors > 0'),
    alarmAboveZero(scope, `${id}ThrottlesAlarm`, fn.metricThrottles({ period, statistic: 'Maximum' }), 'Throttles > 0'),
  ];
}

/** Puts every CloudFormation resource under `construct` under `condition`. */
export function conditionAll(construct: Construct, condition: CfnCondition): void {
  for (const child of construct.node.findAll()) {
    if (child instanceof CfnResource) child.cfnOptions.condition = condition;
  }
}

/** The calls the token-table adapter makes (src/store/dynamodb/token-table.ts), DescribeTable for /readyz. */
export const TOKEN_TABLE_ACTIONS = ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'DescribeTable'].map((action) => `dynamodb:${action}`);
/** What counting active tokens needs (the metrics job). */
export const TOKEN_TABLE_QUERY = ['dynamodb:Query'];

/**
 * `actions` on the token table, and of them Query on its one index, named (the CDK's Table.grant adds every
 * action on `<table>/index/*`).
 */
export function grantTokenTable(grantee: IGrantable, tableArn: string, actions: readonly string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: [...actions], resources: [tableArn] }));
  if (actions.includes('dynamodb:Query')) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${tableArn}/index/${TOKEN_TABLE.expiryIndex}`] }),
    );
  }
}

/**
 * Access to the signing keys in Secrets Manager: read them, and create the event's key (the first function to
 * start does), under the stack's name prefix only.
 */
export function signingKeysAccess(prefix: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'SigningKeysInSecretsManager',
    effect: Effect.ALLOW,
    actions: ['secretsmanager:CreateSecret', 'secretsmanager:GetSecretValue'],
    resources: [Fn.join('', ['arn:', Aws.PARTITION, ':secretsmanager:', Aws.REGION, ':', Aws.ACCOUNT_ID, ':secret:', prefix, '*'])],
  });
}

// ---- logging (issue 19: at least VWR's) ----

/** Retention of every log group the stacks create; S3 logs (CloudFront, S3 access) expire after LOG_BUCKET_DAYS. */
export const LOG_RETENTION = RetentionDays.ONE_MONTH;
export const LOG_BUCKET_DAYS = 90;

/** A log group with the stacks' retention, deleted with its stack. */
export function logGroup(scope: Construct, id: string, props: { logGroupName?: string } = {}): LogGroup {
  return new LogGroup(scope, id, { retention: LOG_RETENTION, removalPolicy: RemovalPolicy.DESTROY, ...props });
}

/**
 * The bucket CloudFront's standard logs and S3's server access logs go to (prefixes cloudfront/ and s3/):
 * private, encrypted, ACLs enabled for the bucket owner (CloudFront's standard logging writes with an ACL),
 * objects expired after LOG_BUCKET_DAYS. Kept when the stack is deleted (logs outlive what they log).
 */
export function accessLogsBucket(scope: Construct, id = 'AccessLogsBucket'): Bucket {
  return new Bucket(scope, id, {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
    lifecycleRules: [{ expiration: Duration.days(LOG_BUCKET_DAYS) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

/**
 * Stage options with VWR's logging: JSON access logs to `accessLogs`, execution logs at ERROR, metrics; and
 * throttling (rate and burst, per second, for every method).
 */
export function loggedStage(stageName: string, accessLogs: LogGroup, throttling: { rate: number; burst: number }): StageOptions {
  return {
    stageName,
    loggingLevel: MethodLoggingLevel.ERROR,
    accessLogDestination: new LogGroupLogDestination(accessLogs),
    accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
    metricsEnabled: true,
    throttlingRateLimit: throttling.rate,
    throttlingBurstLimit: throttling.burst,
  };
}

/**
 * The execution log group API Gateway writes `api`'s stage logs to, created beforehand so that it has the
 * stacks' retention (API Gateway would create it without one) and the stage waits for it.
 */
export function executionLogGroup(scope: Construct, id: string, api: RestApi, stageName: string): LogGroup {
  const group = logGroup(scope, id, { logGroupName: Fn.join('', ['API-Gateway-Execution-Logs_', api.restApiId, `/${stageName}`]) });
  api.deploymentStage.node.addDependency(group);
  return group;
}

// ---- flood limits (issue 19) ----

/** Sets a function's reserved concurrency to `parameter`, or none when it is 0. */
export function reservedConcurrency(stack: Stack, fn: LambdaFn, parameter: CfnParameter): void {
  const none = new CfnCondition(stack, `${fn.node.id}Unreserved`, { expression: Fn.conditionEquals(parameter.valueAsNumber, 0) });
  (fn.node.defaultChild as CfnFunction).addPropertyOverride(
    'ReservedConcurrentExecutions',
    Fn.conditionIf(none.logicalId, Aws.NO_VALUE, parameter.valueAsNumber),
  );
}

/**
 * A WAF web ACL with one rate-based rule (requests per client IP per 5 minutes, blocked above), created when
 * `rateLimit` is not 0 (the returned condition). `scope` CLOUDFRONT for a distribution (CloudFormation only
 * creates those in us-east-1), REGIONAL for a REST API stage.
 */
export function rateLimitAcl(stack: Stack, id: string, rateLimit: CfnParameter, scope: 'CLOUDFRONT' | 'REGIONAL'): { acl: CfnWebACL; on: CfnCondition } {
  const on = new CfnCondition(stack, `${id}On`, { expression: Fn.conditionNot(Fn.conditionEquals(rateLimit.valueAsNumber, 0)) });
  const metric = (name: string) => ({ cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName: Fn.join('-', [Aws.STACK_NAME, name]) });
  const acl = new CfnWebACL(stack, id, {
    scope,
    defaultAction: { allow: {} },
    visibilityConfig: metric('waf'),
    rules: [
      {
        name: 'RatePerClientIp',
        priority: 0,
        action: { block: {} },
        // (cfn-lint warns that the default 0 is below WAF's minimum: with 0 the web ACL is not made.)
        statement: { rateBasedStatement: { limit: rateLimit.valueAsNumber, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
        visibilityConfig: metric('rate-per-ip'),
      },
    ],
  });
  acl.cfnOptions.condition = on;
  return { acl, on };
}

export function wafRateParameter(stack: Stack, what: string): CfnParameter {
  return new CfnParameter(stack, 'WafRateLimit', {
    type: 'Number',
    description: `AWS WAF in front of ${what}: requests one client IP may make in 5 minutes before it is blocked (a rate-based rule); 0 = no web ACL`,
    default: 0,
    minValue: 0,
    maxValue: 2_000_000_000,
  });
}

/**
 * The core's flood-limit parameters (also the getting-started stack's, passed on): name → [description,
 * default, min, max]. Rates and bursts are requests per second for the whole stage (API Gateway's token bucket).
 */
export const CORE_LIMIT_PARAMETERS = {
  PublicApiRateLimit: ['Public API stage and CloudFront usage plan: steady requests per second (above: 429)', 5000, 1, 1_000_000],
  PublicApiBurstLimit: ['Public API stage and CloudFront usage plan: burst of requests', 2500, 1, 1_000_000],
  PrivateApiRateLimit: ['Private API stage: steady requests per second (above: 429)', 500, 1, 1_000_000],
  PrivateApiBurstLimit: ['Private API stage: burst of requests', 1000, 1, 1_000_000],
  PublicApiReservedConcurrency: ['Reserved concurrency of the public API function (its executions reach Redis); 0 = none (accounts with a concurrency quota of 10 must use 0)', 100, 0, 100_000],
  PrivateApiReservedConcurrency: ['Reserved concurrency of the private API function; 0 = none', 20, 0, 100_000],
  WafRateLimit: ['AWS WAF web ACL on the public API\'s CloudFront distribution: requests one client IP may make in 5 minutes before it is blocked; 0 = none. Needs the stack in us-east-1 (CloudFront web ACLs live there); elsewhere use WebACLArn', 0, 0, 2_000_000_000],
} as const;

export type CoreLimitParameter = keyof typeof CORE_LIMIT_PARAMETERS;

export function coreLimitParameters(stack: Stack): Record<CoreLimitParameter, CfnParameter> {
  return Object.fromEntries(
    Object.entries(CORE_LIMIT_PARAMETERS).map(([name, [description, defaultValue, min, max]]) => [
      name,
      new CfnParameter(stack, name, { type: 'Number', description, default: defaultValue, minValue: min, maxValue: max }),
    ]),
  ) as Record<CoreLimitParameter, CfnParameter>;
}

/** ARN of a web ACL of scope CLOUDFRONT made elsewhere (us-east-1), for the public API's distribution. */
export function webAclArnParameter(stack: Stack): CfnParameter {
  return new CfnParameter(stack, 'WebACLArn', {
    type: 'String',
    description: 'ARN of an existing AWS WAF web ACL of scope CLOUDFRONT (made in us-east-1) for the public API\'s distribution; empty = none. Ignored when WafRateLimit is not 0',
    default: '',
    allowedPattern: '^(arn:aws[a-z-]*:wafv2:us-east-1:[0-9]{12}:global/webacl/.+)?$',
    constraintDescription: 'Empty, or the ARN of a global (CLOUDFRONT) web ACL.',
  });
}
