// The OpenID stack (VWR's virtual-waiting-room-on-aws-openid template): the waiting room as an OpenID Connect
// identity provider (spec/integrations.md §2), on its own REST API whose stage is named `oidc`, as VWR's was:
// the URLs are VWR's, https://<api>.execute-api.<region>.amazonaws.com/oidc/....
//
// One function (the `oidc` bundle, src/aws/oidc.ts) serves the stage's /{proxy+}: discovery, keys, authorize,
// the login page and its join/continue calls, token, userInfo. The issuer is PUBLIC_URL (the API's host) + /oidc.
// The login page polls the core's public API through CloudFront (VWR's PublicAPIEndpoint parameter). The
// client is the event: its redirect-URI allow-list and secret are the two secrets below, read at cold start.
//
// The function signs tokens in process, over the core stack's waiting room, and joins visitors through the
// core's SQS intake queue, as the core's public API does (src/aws/oidc.ts): a flood of logins waits in the
// queue, and the core's intake consumer numbers it. It runs in the core's VPC (whose SQS endpoint it reaches
// the queue through) and reads the core's settings document, all found through the core stack's exports
// (deploy/aws/stacks/core-exports.ts), named after the event ID: VWR's parameter file (PublicAPIEndpoint,
// PrivateAPIEndpoint, APIRegion, EventID) deploys the template unchanged. Exports are regional, so the stack
// must be in its core's Region: a rule refuses an APIRegion other than the stack's own before anything is
// made. PrivateAPIEndpoint must be the private API of that core (checked at cold start against the core's
// settings document: a parameter file naming another core is refused, not served); it is not called (VWR's
// adapter called the private API's generate_token; this one signs with the core's keys itself).

import { Aws, CfnOutput, CfnRule, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Distribution, ViewerProtocolPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, CfnFunction, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { EVENT_ID_PATTERN } from '../../../src/domain/room-settings.ts';
import {
  accessLogsBucket,
  alarmAboveZero,
  executionLogGroup,
  functionAlarms,
  grantTokenTable,
  loggedStage,
  logGroup,
  numberParameter,
  rateLimitAcl,
  reservedConcurrency,
  signingKeysAccess,
  stringParameter,
  TOKEN_TABLE_ACTIONS,
  wafRateParameter,
} from './common.ts';
import { importCoreValue, type CoreExport } from './core-exports.ts';

/** VWR's stage name: the adapter's URLs are https://<api>.execute-api.<region>.amazonaws.com/oidc/.... */
export const STAGE = 'oidc';

export class OpenIdStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, OpenID Connect adapter';
    const publicApi = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint URL for the virtual waiting room APIs');
    // VWR's; kept for its parameter files (see above).
    const privateApi = stringParameter(this, 'PrivateAPIEndpoint', 'Private endpoint URL for the virtual waiting room APIs');
    const apiRegion = stringParameter(this, 'APIRegion', 'AWS region name for the public and private waiting room APIs');
    const eventId = stringParameter(this, 'EventID', 'Event ID of waiting room', {
      allowedPattern: EVENT_ID_PATTERN,
      constraintDescription: 'The core stack\'s EventId: letters, digits and . _ ~ - (at most 128).',
    });
    new CfnRule(this, 'CoreInThisRegion', {
      assertions: [{
        assert: Fn.conditionEquals(apiRegion.valueAsString, Aws.REGION),
        assertDescription: 'Deploy this stack in the core stack\'s Region (APIRegion): it runs over the core\'s Redis and tables, found through the core\'s exports, which are regional.',
      }],
    });
    // Flood limits: stage throttling, reserved concurrency, optional WAF (a rate-based rule per client IP).
    const rateLimit = numberParameter(this, 'ApiRateLimit', 'OpenID API stage: steady requests per second (above: 429)', 1000, { min: 1, max: 1_000_000 });
    const burstLimit = numberParameter(this, 'ApiBurstLimit', 'OpenID API stage: burst of requests', 500, { min: 1, max: 1_000_000 });
    const reserved = numberParameter(this, 'ReservedConcurrency', 'Reserved concurrency of the OpenID function (its executions reach the core\'s Redis); 0 = none', 50, { min: 0, max: 100_000 });
    const wafRate = wafRateParameter(this, 'the OpenID API');
    const core = (name: CoreExport) => importCoreValue(eventId.valueAsString, name);

    // Per event: the client secret (50 alphanumeric characters) and the redirect-URI allow-list.
    const clientSecret = new Secret(this, 'ClientSecret', {
      secretName: Fn.join('', [Aws.STACK_NAME, '/client_secret']),
      generateSecretString: { excludePunctuation: true, passwordLength: 50, includeSpace: false },
    });
    const redirectUris = new Secret(this, 'RedirectUris', {
      secretName: Fn.join('', [Aws.STACK_NAME, '/redirect_uris']),
      description: 'JSON array of the redirect URIs relying parties may use',
      generateSecretString: { secretStringTemplate: '{"redirect_uris": []}', generateStringKey: 'unused', passwordLength: 8 },
    });

    const logs = accessLogsBucket(this);
    const bucket = new Bucket(this, 'OpenIDWebContentBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: 's3/',
    });
    // VWR's login-page bucket and distribution (its WaitingRoomWebContentBucket output); the login page itself is
    // served by the function, so nothing needs to be uploaded here.
    new Distribution(this, 'OpenIDWebContentCloudFront', {
      comment: 'Anteroom OpenID waiting-room login page',
      defaultRootObject: 'index.html',
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: { origin: S3BucketOrigin.withOriginAccessControl(bucket), viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS },
    });

    const api = new RestApi(this, 'RestAPI', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'openid-waiting-room-api']) as string,
      description: 'Waiting Room Open ID Adapter API',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: loggedStage(STAGE, logGroup(this, 'ApiAccessLogGroup'), { rate: rateLimit.valueAsNumber, burst: burstLimit.valueAsNumber }),
      cloudWatchRole: false,
    });
    api.node.tryRemoveChild('Endpoint');
    executionLogGroup(this, 'ApiExecutionLogs', api, STAGE);
    const waf = rateLimitAcl(this, 'ApiWebAcl', wafRate, 'REGIONAL');
    const association = new CfnWebACLAssociation(this, 'ApiWebAclAssociation', { resourceArn: api.deploymentStage.stageArn, webAclArn: waf.acl.attrArn });
    association.cfnOptions.condition = waf.on;
    // The API's host: the issuer is this + /oidc, the stage (the function adds the stage to the paths it sees).
    const host = Fn.join('', ['https://', api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX]);

    const fn = new LambdaFn(this, 'APIHandler', {
      description: 'Anteroom OpenID Connect adapter',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: lambdaCode(this, 'oidc', props.code),
      memorySize: 1024,
      timeout: Duration.seconds(10),
      environment: {
        // Checked against the core's own at cold start.
        EVENT_ID: eventId.valueAsString,
        CORE_SETTINGS_SECRET_ARN: core('CoreSettingsSecretArn'),
        PUBLIC_URL: host,
        PUBLIC_API_URL: publicApi.valueAsString,
        // Checked against the core's private API URL at cold start (src/aws/core-settings.ts).
        PRIVATE_API_ENDPOINT: privateApi.valueAsString,
        // The core's intake queue: joins take the public API's buffered path.
        INTAKE_QUEUE_URL: core('IntakeQueueUrl'),
        CLIENT_SECRET_ID: clientSecret.secretName,
        REDIRECT_URIS_SECRET_ID: redirectUris.secretName,
      },
      logGroup: logGroup(this, 'APIHandlerLogs'),
    });
    reservedConcurrency(this, fn, reserved);
    clientSecret.grantRead(fn);
    redirectUris.grantRead(fn);
    // In the core's VPC, with the core functions' security group (the one Redis admits).
    (fn.node.defaultChild as CfnFunction).vpcConfig = {
      subnetIds: Fn.split(',', core('FunctionSubnetIds')),
      securityGroupIds: [core('FunctionSecurityGroupId')],
    };
    fn.role?.addManagedPolicy(ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    // What a core function may use, no more: its settings, Redis AUTH, the token table, the bus, the keys; and
    // of the intake queue only SendMessage (what SendMessageBatch needs): joins take the public API's queue.
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [core('IntakeQueueArn')] }));
    Secret.fromSecretCompleteArn(this, 'CoreSettings', core('CoreSettingsSecretArn')).grantRead(fn);
    Secret.fromSecretCompleteArn(this, 'CoreRedisAuthToken', core('RedisAuthSecretArn')).grantRead(fn);
    // The calls the token-table adapter makes (src/store/dynamodb), on the table and its index.
    grantTokenTable(fn, core('TokenTableArn'), TOKEN_TABLE_ACTIONS);
    EventBus.fromEventBusArn(this, 'CoreEventBus', core('EventBusArn')).grantPutEventsTo(fn);
    fn.addToRolePolicy(signingKeysAccess(core('SigningKeysSecretPrefix')));
    functionAlarms(this, 'APIHandler', fn);

    const integration = new LambdaIntegration(fn, { scopePermissionToMethod: false });
    // Every path inside the stage (CDK adds the same ANY on the stage's root).
    api.root.addProxy({ anyMethod: false }).addMethod('ANY', integration);
    const minute = Duration.minutes(1);
    alarmAboveZero(this, '4XXErrorOpenIDApiAlarm', api.metricClientError({ period: minute, statistic: 'Maximum' }), '4xx errors > 0');
    alarmAboveZero(this, '5XXErrorOpenIDApiAlarm', api.metricServerError({ period: minute, statistic: 'Maximum' }), '5xx errors > 0');

    const base = Fn.join('', [host, `/${STAGE}`]);
    const url = (path: string) => Fn.join('', [base, path]);
    new CfnOutput(this, 'IssuerURL', { value: base });
    new CfnOutput(this, 'AuthorizationURL', { value: url('/authorize') });
    new CfnOutput(this, 'TokenURL', { value: url('/token') });
    new CfnOutput(this, 'UserInfoURL', { value: url('/userInfo') });
    new CfnOutput(this, 'PublicKeysURL', { value: url('/.well-known/jwks.json') });
    new CfnOutput(this, 'ConfigurationURL', { value: url('/.well-known/openid-configuration') });
    new CfnOutput(this, 'ClientID', { value: eventId.valueAsString });
    new CfnOutput(this, 'ClientSecretID', { value: clientSecret.secretName });
    new CfnOutput(this, 'WaitingRoomWebContentBucket', { value: bucket.bucketName });
  }
}
