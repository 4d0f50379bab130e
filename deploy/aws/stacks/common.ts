// Pieces every stack uses: VWR-style parameters, alarms, and conditions on whole constructs.

import { Aws, CfnCondition, CfnParameter, CfnResource, Duration, Fn, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

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
