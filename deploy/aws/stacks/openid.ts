// The OpenID stack (VWR's virtual-waiting-room-on-aws-openid template): the waiting room as an OpenID Connect
// identity provider (spec/integrations.md §2), under /oidc of its own REST API.
//
// NOT YET RUNNABLE: the function's code is the `oidc` bundle, which needs a Lambda adapter over src/oidc (being
// written separately). The template is complete and synthesised so its parameters and outputs are fixed, but
// `npm run build:lambda` produces no oidc.zip yet, and this stack is left out of `code=asset` synthesis.

import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Distribution, ViewerProtocolPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { alarmAboveZero, functionAlarms, stringParameter } from './common.ts';

export class OpenIdStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, OpenID Connect adapter';
    const publicApi = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint URL for the virtual waiting room APIs');
    const privateApi = stringParameter(this, 'PrivateAPIEndpoint', 'Private endpoint URL for the virtual waiting room APIs');
    const apiRegion = stringParameter(this, 'APIRegion', 'AWS region name for the public and private waiting room APIs');
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
    const cdn = new Distribution(this, 'OpenIDWebContentCloudFront', {
      comment: 'Anteroom OpenID waiting-room login page',
      defaultRootObject: 'index.html',
      defaultBehavior: { origin: S3BucketOrigin.withOriginAccessControl(bucket), viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS },
    });

    const fn = new LambdaFn(this, 'APIHandler', {
      description: 'Anteroom OpenID Connect adapter',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: lambdaCode(this, 'oidc', props.code),
      memorySize: 1024,
      timeout: Duration.seconds(10),
      environment: {
        WAITING_ROOM_EVENT_ID: eventId.valueAsString,
        PUBLIC_API_ENDPOINT: publicApi.valueAsString,
        PRIVATE_API_ENDPOINT: privateApi.valueAsString,
        API_REGION: apiRegion.valueAsString,
        CLIENT_SECRET_ID: clientSecret.secretName,
        REDIRECT_URIS_SECRET_ID: redirectUris.secretName,
        WWW_RESOURCES_URL: Fn.join('', ['https://', cdn.distributionDomainName]),
      },
      logGroup: new LogGroup(this, 'APIHandlerLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
    clientSecret.grantRead(fn);
    redirectUris.grantRead(fn);
    const privateApiId = Fn.select(0, Fn.split('.', Fn.select(2, Fn.split('/', privateApi.valueAsString))));
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['execute-api:Invoke'],
        resources: [Fn.join('', ['arn:', Aws.PARTITION, ':execute-api:', apiRegion.valueAsString, ':', Aws.ACCOUNT_ID, ':', privateApiId, '/*/POST/generate_token'])],
      }),
    );
    functionAlarms(this, 'APIHandler', fn);

    const api = new RestApi(this, 'RestAPI', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'openid-waiting-room-api']) as string,
      description: 'Waiting Room Open ID Adapter API',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: { stageName: 'api' },
      cloudWatchRole: false,
    });
    api.node.tryRemoveChild('Endpoint');
    api.root.addResource('oidc').addProxy({ defaultIntegration: new LambdaIntegration(fn), anyMethod: true });
    const minute = Duration.minutes(1);
    alarmAboveZero(this, '4XXErrorOpenIDApiAlarm', api.metricClientError({ period: minute, statistic: 'Maximum' }), '4xx errors > 0');
    alarmAboveZero(this, '5XXErrorOpenIDApiAlarm', api.metricServerError({ period: minute, statistic: 'Maximum' }), '5xx errors > 0');

    const base = Fn.join('', ['https://', api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX, '/api/oidc']);
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
