// Verify at the edge on CloudFront (docs/edge.md "CloudFront"): part of the sample stack, off unless
// EdgeAnteroomPrivateUrl is given. NOT RUN ON AWS: synthesised and checked here (test/aws/edge-stack.test.ts),
// its rotation code run in Node against a real Anteroom node and a stand-in KeyValueStore client.
// - a CloudFront KeyValueStore holding `edge-hmac-<kid>` = the HMAC key of each edge-cookie key Anteroom
//   accepts (its newest signs; the previous stays for the overlap);
// - the CloudFront Function (cloudfront-js-2.0, deploy/aws/edge/anteroom-edge-cloudfront.js) reading it, for the
//   viewer request of the protected site's distribution (its ARN is an output: associate it with your
//   distribution's behaviours, and route /_anteroom/* to Anteroom's gate without it);
// - EdgeKeyRotation, a function that keeps the store equal to Anteroom's keys (every 5 minutes) and rotates them
//   through Anteroom's private API (daily): Anteroom stays the one source of keys.

import { CfnOutput, Duration, Fn, type Stack } from 'aws-cdk-lib';
import { Function as CloudFrontFunction, FunctionCode, FunctionRuntime, KeyValueStore } from 'aws-cdk-lib/aws-cloudfront';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { CfnCondition } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { Construct } from 'constructs';
import { buildEdgeFunction, compact } from '../edge/build-function.ts';
import { conditionAll, functionAlarms, logGroup, stringParameter } from './common.ts';

/** How often the store is made equal to Anteroom's keys, and how often the keys rotate. */
export const EDGE_KEY_SYNC = Duration.minutes(5);
export const EDGE_KEY_ROTATION = Duration.days(1);
/** CloudFormation takes inline Lambda code (ZipFile) up to 4 KB. */
export const INLINE_CODE_MAX = 4096;

export function edgeRotationCode(): string {
  return compact(readFileSync(new URL('../edge/rotate-edge-keys.js', import.meta.url), 'utf8'));
}

export class EdgeVerification extends Construct {
  constructor(stack: Stack, id: string, eventId: string) {
    super(stack, id);
    const privateUrl = stringParameter(stack, 'EdgeAnteroomPrivateUrl', 'Verify at the edge (docs/edge.md): Anteroom\'s private API URL (https://…/private), reachable from Lambda; empty = no edge verification', { default: '' });
    const tokenSecret = stringParameter(stack, 'EdgeAdminTokenSecretArn', 'Verify at the edge: ARN of a Secrets Manager secret whose value is Anteroom\'s admin token', { default: '' });
    const on = new CfnCondition(stack, 'EdgeVerificationOn', { expression: Fn.conditionNot(Fn.conditionEquals(privateUrl.valueAsString, '')) });

    const store = new KeyValueStore(this, 'EdgeKeys', { comment: 'Anteroom edge-cookie HMAC keys (edge-hmac-<kid>), kept by EdgeKeyRotation' });
    const fn = new CloudFrontFunction(this, 'EdgeFunction', {
      comment: 'Anteroom: verify admission at the edge (viewer request)',
      runtime: FunctionRuntime.JS_2_0,
      keyValueStore: store,
      // The room of the sample stack protects every path of the site it is associated with.
      code: FunctionCode.fromInline(buildEdgeFunction([{ path: '/', event_id: eventId, bypass_paths: [] }])),
    });

    const rotation = new LambdaFn(this, 'EdgeKeyRotation', {
      description: 'Anteroom EdgeKeyRotation: the CloudFront KeyValueStore holds Anteroom\'s edge-cookie keys',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: Code.fromInline(edgeRotationCode()),
      memorySize: 256,
      timeout: Duration.seconds(30),
      environment: { ANTEROOM_PRIVATE_URL: privateUrl.valueAsString, ADMIN_TOKEN_SECRET_ARN: tokenSecret.valueAsString, KVS_ARN: store.keyValueStoreArn },
      logGroup: logGroup(this, 'EdgeKeyRotationLogs'),
    });
    rotation.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['cloudfront-keyvaluestore:DescribeKeyValueStore', 'cloudfront-keyvaluestore:ListKeys', 'cloudfront-keyvaluestore:UpdateKeys'],
        resources: [store.keyValueStoreArn],
      }),
    );
    rotation.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [tokenSecret.valueAsString] }));
    new Rule(this, 'EdgeKeySync', { schedule: Schedule.rate(EDGE_KEY_SYNC), targets: [new LambdaFunction(rotation, { event: RuleTargetInput.fromObject({ rotate: false }) })] });
    new Rule(this, 'EdgeKeyRotationSchedule', { schedule: Schedule.rate(EDGE_KEY_ROTATION), targets: [new LambdaFunction(rotation, { event: RuleTargetInput.fromObject({ rotate: true }) })] });
    functionAlarms(this, 'EdgeKeyRotation', rotation);
    conditionAll(this, on);

    new CfnOutput(stack, 'EdgeFunctionARN', { value: fn.functionArn, condition: on, description: 'CloudFront Function to associate (viewer request) with the protected site\'s behaviours' });
    new CfnOutput(stack, 'EdgeKeyValueStoreARN', { value: store.keyValueStoreArn, condition: on });
  }
}
