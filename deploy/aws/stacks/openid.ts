// The OpenID stack (VWR's virtual-waiting-room-on-aws-openid template): the waiting room as an OpenID Connect
// identity provider (spec/integrations.md §2), under /oidc of its own REST API (stage `api`).
//
// One function (the `oidc` bundle, src/aws/oidc.ts) serves /oidc/{proxy+}: discovery, keys, authorize, the
// login page and its join/continue calls, token, userInfo. The issuer is the stage URL (PUBLIC_URL) + /oidc.
// The login page polls the core's public API through CloudFront (VWR's PublicAPIEndpoint parameter). The
// client is the event: its redirect-URI allow-list and secret are the two secrets below, read at cold start.
//
// The function joins visitors and signs tokens in process, over the core stack's waiting room: it runs in the
// core's VPC and reads the core's settings document, both found through the core stack's exports
// (deploy/aws/stacks/core-exports.ts) under the one parameter VWR's template did not have, CoreStackName.
// VWR's PrivateAPIEndpoint and APIRegion are kept so its parameter files still name what they name (with
// CoreStackName added, they deploy); nothing here calls the private API, and the stack must be in its core
// stack's region anyway (exports are regional).

import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Distribution, ViewerProtocolPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { ManagedPolicy } from 'aws-cdk-lib/aws-iam';
import { Architecture, CfnFunction, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { EVENT_ID_PATTERN } from '../../../src/domain/room-settings.ts';
import { TOKEN_TABLE } from '../../../src/store/dynamodb/token-table.ts';
import { alarmAboveZero, functionAlarms, signingKeysAccess, stringParameter, TOKEN_TABLE_ACTIONS } from './common.ts';
import { importCoreValue, type CoreExport } from './core-exports.ts';

export class OpenIdStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, OpenID Connect adapter';
    const publicApi = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint URL for the virtual waiting room APIs');
    // VWR's; kept for its parameter files (see above).
    stringParameter(this, 'PrivateAPIEndpoint', 'Private endpoint URL for the virtual waiting room APIs');
    stringParameter(this, 'APIRegion', 'AWS region name for the public and private waiting room APIs');
    const eventId = stringParameter(this, 'EventID', 'Event ID of waiting room', {
      allowedPattern: EVENT_ID_PATTERN,
      constraintDescription: 'The core stack\'s EventId: letters, digits and . _ ~ - (at most 128).',
    });
    const coreStackName = stringParameter(
      this,
      'CoreStackName',
      'Name of the core stack (virtual-waiting-room-on-aws) of this event, in this region: its CoreStackName output',
      { allowedPattern: '^[A-Za-z][A-Za-z0-9-]{0,127}$', constraintDescription: 'A CloudFormation stack name.' },
    );
    const core = (name: CoreExport) => importCoreValue(coreStackName.valueAsString, name);

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

    const bucket = new Bucket(this, 'OpenIDWebContentBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // VWR's login-page bucket and distribution (its WaitingRoomWebContentBucket output); the login page itself is
    // served by the function, so nothing needs to be uploaded here.
    new Distribution(this, 'OpenIDWebContentCloudFront', {
      comment: 'Anteroom OpenID waiting-room login page',
      defaultRootObject: 'index.html',
      defaultBehavior: { origin: S3BucketOrigin.withOriginAccessControl(bucket), viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS },
    });

    const api = new RestApi(this, 'RestAPI', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'openid-waiting-room-api']) as string,
      description: 'Waiting Room Open ID Adapter API',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: { stageName: 'api' },
      cloudWatchRole: false,
    });
    api.node.tryRemoveChild('Endpoint');
    // The stage URL, what the function is served under: the issuer is this + /oidc.
    const stageUrl = Fn.join('', ['https://', api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX, '/api']);

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
        PUBLIC_URL: stageUrl,
        PUBLIC_API_URL: publicApi.valueAsString,
        CLIENT_SECRET_ID: clientSecret.secretName,
        REDIRECT_URIS_SECRET_ID: redirectUris.secretName,
        NODE_OPTIONS: '--enable-source-maps',
      },
      logGroup: new LogGroup(this, 'APIHandlerLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
    clientSecret.grantRead(fn);
    redirectUris.grantRead(fn);
    // In the core's VPC, with the core functions' security group (the one Redis admits).
    (fn.node.defaultChild as CfnFunction).vpcConfig = {
      subnetIds: Fn.split(',', core('FunctionSubnetIds')),
      securityGroupIds: [core('FunctionSecurityGroupId')],
    };
    fn.role?.addManagedPolicy(ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    // What a core function may use, no more: its settings, Redis AUTH, the token table, the bus, the keys.
    Secret.fromSecretCompleteArn(this, 'CoreSettings', core('CoreSettingsSecretArn')).grantRead(fn);
    Secret.fromSecretCompleteArn(this, 'CoreRedisAuthToken', core('RedisAuthSecretArn')).grantRead(fn);
    // The calls the token-table adapter makes (src/store/dynamodb), on the table and its index.
    Table.fromTableAttributes(this, 'CoreTokenTable', { tableArn: core('TokenTableArn'), globalIndexes: [TOKEN_TABLE.expiryIndex] }).grant(fn, ...TOKEN_TABLE_ACTIONS);
    EventBus.fromEventBusArn(this, 'CoreEventBus', core('EventBusArn')).grantPutEventsTo(fn);
    fn.addToRolePolicy(signingKeysAccess(core('SigningKeysSecretPrefix')));
    functionAlarms(this, 'APIHandler', fn);

    const integration = new LambdaIntegration(fn, { scopePermissionToMethod: false });
    api.root.addResource('oidc').addProxy({ defaultIntegration: integration, anyMethod: true });
    const minute = Duration.minutes(1);
    alarmAboveZero(this, '4XXErrorOpenIDApiAlarm', api.metricClientError({ period: minute, statistic: 'Maximum' }), '4xx errors > 0');
    alarmAboveZero(this, '5XXErrorOpenIDApiAlarm', api.metricServerError({ period: minute, statistic: 'Maximum' }), '5xx errors > 0');

    const base = Fn.join('', [stageUrl, '/oidc']);
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
