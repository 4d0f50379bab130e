// The sample inlet strategy stack (VWR's virtual-waiting-room-on-aws-sample-inlet-strategy template): either
// the Periodic inlet (a schedule, every minute) or the MaxSize inlet (an SNS topic the site publishes its
// reports to), acting on the core stack through its private API with SigV4 (src/aws/inlet.ts).

import { Aws, CfnCondition, CfnOutput, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Effect, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { Architecture, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { conditionAll, logGroup, numberParameter, stringParameter } from './common.ts';
import { STAGE as CORE_STAGE } from './core.ts';

export class InletStrategyStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, sample inlet strategies';
    const eventId = stringParameter(this, 'EventId', 'Unique ID for this instance of the waiting room', { minLength: 1 });
    const endpoint = stringParameter(this, 'PrivateCoreApiEndpoint', 'The private core API endpoint');
    const region = stringParameter(this, 'CoreApiRegion', 'AWS Region where the core API is installed');
    const strategy = stringParameter(this, 'InletStrategy', 'Inlet strategy to be deployed. Periodic increments the serving number every minute; MaxSize increments it by what the downstream site reports it can take.', {
      default: 'Periodic',
      allowedValues: ['Periodic', 'MaxSize'],
    });
    const incrementBy = numberParameter(this, 'IncrementBy', 'How much the serving counter should be incremented every minute.', 10);
    const startTime = numberParameter(this, 'StartTime', 'When to start incrementing the serving number (epoch seconds).', 1626336061);
    const endTime = numberParameter(this, 'EndTime', 'When to stop incrementing the serving number (epoch seconds); 0 = never.', 0);
    const alarmName = stringParameter(this, 'CloudWatchAlarmName', 'Optional CloudWatch alarm; while it is in ALARM the serving number is not incremented.', { default: '' });
    const maxSize = numberParameter(this, 'MaxSize', 'The maximum number of transactions the downstream site can process at a time.', 100);
    const periodic = new CfnCondition(this, 'Periodic', { expression: Fn.conditionEquals(strategy.valueAsString, 'Periodic') });
    const maxSizeOn = new CfnCondition(this, 'MaxSizeCondition', { expression: Fn.conditionEquals(strategy.valueAsString, 'MaxSize') });
    // VWR's name; CloudFormation keeps conditions apart from the MaxSize parameter, the CDK's construct tree does not.
    maxSizeOn.overrideLogicalId('MaxSize');

    // Least privilege: the three private routes an inlet calls, on the core stack's private API only.
    // The API ID is the first label of the endpoint's host name (https://<id>.execute-api.<region>...); the
    // stage is the core's (`api`, VWR's too).
    const apiId = Fn.select(0, Fn.split('.', Fn.select(2, Fn.split('/', endpoint.valueAsString))));
    const route = (method: string, path: string) =>
      Fn.join('', ['arn:', Aws.PARTITION, ':execute-api:', region.valueAsString, ':', Aws.ACCOUNT_ID, ':', apiId, `/${CORE_STAGE}/`, method, '/', path]);
    const role = new Role(this, 'InletRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
    });
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['execute-api:Invoke'],
        resources: [route('POST', 'increment_serving_counter'), route('POST', 'update_session'), route('GET', 'num_active_tokens')],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['cloudwatch:DescribeAlarms'],
        resources: [Fn.join('', ['arn:', Aws.PARTITION, ':cloudwatch:', Aws.REGION, ':', Aws.ACCOUNT_ID, ':alarm:', alarmName.valueAsString])],
      }),
    );
    const environment = { EVENT_ID: eventId.valueAsString, CORE_API_ENDPOINT: endpoint.valueAsString, CORE_API_REGION: region.valueAsString };
    const makeFunction = (name: string, handler: string, env: Record<string, string>) =>
      new LambdaFn(this, name, {
        description: `Anteroom ${name}`,
        runtime: Runtime.NODEJS_24_X,
        architecture: Architecture.ARM_64,
        handler: `index.${handler}`,
        code: lambdaCode(this, 'inlet', props.code),
        memorySize: 512,
        timeout: Duration.seconds(30),
        role,
        environment: { ...environment, ...env },
        logGroup: logGroup(this, `${name}Logs`),
      });

    const periodicFn = makeFunction('PeriodicInlet', 'periodicHandler', {
      INCREMENT_BY: incrementBy.valueAsString,
      START_TIME: startTime.valueAsString,
      END_TIME: endTime.valueAsString,
      CLOUDWATCH_ALARM: alarmName.valueAsString,
    });
    const rule = new Rule(this, 'PeriodicInletRule', {
      description: 'Increments the waiting room serving counter every minute',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(periodicFn)],
    });
    conditionAll(periodicFn, periodic);
    conditionAll(rule, periodic);

    const maxSizeFn = makeFunction('MaxSizeInlet', 'maxSizeHandler', { MAX_SIZE: maxSize.valueAsString });
    const topic = new Topic(this, 'MaxSizeInletSns', {
      displayName: Fn.join('-', [Aws.STACK_NAME, 'MaxSizeNotification']),
      masterKey: Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    topic.addSubscription(new LambdaSubscription(maxSizeFn));
    conditionAll(maxSizeFn, maxSizeOn);
    conditionAll(topic, maxSizeOn);

    new CfnOutput(this, 'InletTopicARN', { value: topic.topicArn, description: 'ARN of topic subscribed by inlet Lambda function', condition: maxSizeOn });
  }
}
