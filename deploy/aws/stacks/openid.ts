// The OpenID stack (VWR's virtual-waiting-room-on-aws-openid template): the waiting room as an OpenID Connect
// identity provider (spec/integrations.md §2), under /oidc of its own REST API (stage `api`).
//
// One function (the `oidc` bundle, src/aws/oidc.ts) serves /oidc/{proxy+} (discovery, keys, authorize, the
// login page and its join/continue calls, token, userInfo) and the three public paths the login page polls
// relative to itself (/api/oidc/login → /api/serving_num, /api/waiting_num, /api/queue_num). The issuer is the
// stage URL (PUBLIC_URL) + /oidc. The client is the event: its redirect-URI allow-list and secret are the two
// secrets below, read at cold start.
//
// NOT YET CONNECTED TO THE STORE: the function numbers joins and signs tokens in process, over the waiting room's
// Redis, token table and signing keys, like the core stack's functions. VWR's parameters of this template
// (endpoints, region, event ID) do not carry them, so the function gets no VPC, REDIS_* or TOKEN_TABLE_NAME /
// SIGNING_KEYS_SECRET_PREFIX here and, deployed as is, answers 503. Wiring that (e.g. exports of the core
// stack, or extra parameters) changes this template's parameters and is left open (docs/aws.md).

import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Distribution, ViewerProtocolPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Architecture, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { alarmAboveZero, functionAlarms, stringParameter } from './common.ts';

/** The public API paths the login page polls, served by the OpenID function too. */
export const OPENID_POLLING_PATHS = ['serving_num', 'waiting_num', 'queue_num'] as const;

export class OpenIdStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, OpenID Connect adapter';
    const publicApi = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint URL for the virtual waiting room APIs');
    // VWR's; unused here: the function reaches the store itself, not the private API.
    stringParameter(this, 'PrivateAPIEndpoint', 'Private endpoint URL for the virtual waiting room APIs');
    stringParameter(this, 'APIRegion', 'AWS region name for the public and private waiting room APIs');
    const eventId = stringParameter(this, 'EventID', 'Event ID of waiting room');

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
        EVENT_ID: eventId.valueAsString,
        // The issuer of the waiting room's own tokens (VWR's PublicTokenIssuer); OIDC tokens carry the OIDC issuer.
        ISSUER: publicApi.valueAsString,
        PUBLIC_URL: stageUrl,
        CLIENT_SECRET_ID: clientSecret.secretName,
        REDIRECT_URIS_SECRET_ID: redirectUris.secretName,
        NODE_OPTIONS: '--enable-source-maps',
      },
      logGroup: new LogGroup(this, 'APIHandlerLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
    clientSecret.grantRead(fn);
    redirectUris.grantRead(fn);
    functionAlarms(this, 'APIHandler', fn);

    const integration = new LambdaIntegration(fn);
    api.root.addResource('oidc').addProxy({ defaultIntegration: integration, anyMethod: true });
    // What the login page polls (same origin: no preflight).
    for (const path of OPENID_POLLING_PATHS) api.root.addResource(path).addMethod('GET', integration);
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
