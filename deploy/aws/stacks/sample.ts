// The sample stack (VWR's virtual-waiting-room-on-aws-sample template): the waiting-room page and control
// panel (web/dist, served from S3 through CloudFront) and a sample protected API (/store/*) behind the
// authorizer of the authorizers stack. The API answers {"result": "Success"} itself (a mock integration): it
// exists to show the authorizer at work, with no code of its own.

import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AuthorizationType,
  CfnAuthorizer,
  Cors,
  EndpointType,
  GatewayResponse,
  MockIntegration,
  PassthroughBehavior,
  ResponseType,
  RestApi,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import { Distribution, ViewerProtocolPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnPermission, Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { SHOP_OPERATIONS } from '../../../src/web/shop-api.ts';
import { EdgeVerification } from './edge.ts';
import { accessLogsBucket, executionLogGroup, loggedStage, logGroup, stringParameter } from './common.ts';

/** The sample API answers by itself (a mock): a modest stage limit keeps a flood from costing much. */
export const SAMPLE_API_THROTTLING = { rate: 100, burst: 200 };

export class SampleStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, sample waiting room, control panel and protected API';
    const authorizerArn = stringParameter(this, 'AuthorizerARN', 'ARN of the API Gateway Lambda Authorizer');
    const authorizerRegion = stringParameter(this, 'APIGatewayRegion', 'AWS Region name of the API Gateway');
    const publicApi = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint URL for the virtual waiting room APIs');
    const privateApi = stringParameter(this, 'PrivateAPIEndpoint', 'Private endpoint URL for the virtual waiting room APIs');
    const eventId = stringParameter(this, 'EventID', 'Event ID of waiting room');

    // ---- the pages: private bucket, CloudFront with origin access control ----
    const logs = accessLogsBucket(this);
    const bucket = new Bucket(this, 'SampleWebContentBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: 's3/',
    });
    const cdn = new Distribution(this, 'SampleWebContentCloudFront', {
      comment: 'Anteroom sample waiting room and control panel',
      defaultRootObject: 'index.html',
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: { origin: S3BucketOrigin.withOriginAccessControl(bucket), viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS },
    });

    // ---- the protected sample API ----
    const api = new RestApi(this, 'RestAPI', {
      restApiName: Fn.join('-', [Aws.STACK_NAME, 'sample-protected-api']) as string,
      description: 'Waiting Room Sample Protected API',
      endpointTypes: [EndpointType.REGIONAL],
      deployOptions: loggedStage('api', logGroup(this, 'ApiAccessLogGroup'), SAMPLE_API_THROTTLING),
      cloudWatchRole: false,
      defaultCorsPreflightOptions: { allowOrigins: Cors.ALL_ORIGINS, allowHeaders: ['Content-Type', 'Authorization'] },
    });
    api.node.tryRemoveChild('Endpoint');
    executionLogGroup(this, 'ApiExecutionLogs', api, 'api');
    const authorizerFn = LambdaFn.fromFunctionArn(this, 'WaitingRoomAuthorizerFunction', authorizerArn.valueAsString);
    const authorizer = new TokenAuthorizer(this, 'WaitingRoomAuthorizer', {
      handler: authorizerFn,
      identitySource: 'method.request.header.Authorization',
      resultsCacheTtl: Duration.seconds(60),
    });
    new CfnPermission(this, 'AuthorizerInvokePermission', {
      action: 'lambda:InvokeFunction',
      functionName: authorizerArn.valueAsString,
      principal: new ServicePrincipal('apigateway.amazonaws.com').service,
      sourceArn: Fn.join('', ['arn:', Aws.PARTITION, ':execute-api:', Aws.REGION, ':', Aws.ACCOUNT_ID, ':', api.restApiId, '/authorizers/', authorizer.authorizerId]),
    });
    const success = new MockIntegration({
      passthroughBehavior: PassthroughBehavior.NEVER,
      requestTemplates: { 'application/json': '{"statusCode": 200}' },
      integrationResponses: [
        {
          statusCode: '200',
          responseTemplates: { 'application/json': '{"result": "Success"}' },
          responseParameters: { 'method.response.header.Access-Control-Allow-Origin': "'*'" },
        },
      ],
    });
    // GET and POST, like the self-hosted sample store (src/web/shop-api.ts): the sample page buys with a POST.
    const store = api.root.addResource('store');
    for (const operation of SHOP_OPERATIONS) {
      const resource = store.addResource(operation);
      for (const method of ['GET', 'POST']) {
        resource.addMethod(method, success, {
          authorizationType: AuthorizationType.CUSTOM,
          authorizer,
          methodResponses: [{ statusCode: '200', responseParameters: { 'method.response.header.Access-Control-Allow-Origin': true } }],
        });
      }
    }
    // The authorizer's 401/403 (and any other refusal) must be readable by the page on another origin.
    new GatewayResponse(this, 'RestAPIDefault4xx', { restApi: api, type: ResponseType.DEFAULT_4XX, responseHeaders: { 'Access-Control-Allow-Origin': "'*'" } });
    new GatewayResponse(this, 'RestAPIDefault5xx', { restApi: api, type: ResponseType.DEFAULT_5XX, responseHeaders: { 'Access-Control-Allow-Origin': "'*'" } });
    // The authorizer is invoked in the Region given (VWR's parameter), not the one CDK reads from the ARN.
    (authorizer.node.defaultChild as CfnAuthorizer).authorizerUri = Fn.join('', [
      'arn:', Aws.PARTITION, ':apigateway:', authorizerRegion.valueAsString, ':lambda:path/2015-03-31/functions/', authorizerArn.valueAsString, '/invocations',
    ]);
    const storeUrl = Fn.join('', ['https://', api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX, '/api/store']);
    const site = Fn.join('', ['https://', cdn.distributionDomainName]);

    new CfnOutput(this, 'WaitingRoomURL', {
      value: Fn.join('', [site, '/waiting-room-site/index.html?eventId=', eventId.valueAsString, '&publicApiUrl=', publicApi.valueAsString, '&commerceApiUrl=', storeUrl]),
    });
    new CfnOutput(this, 'ControlPanelURL', {
      value: Fn.join('', [site, '/control-panel/index.html?eventId=', eventId.valueAsString, '&publicApiUrl=', publicApi.valueAsString, '&privateApiUrl=', privateApi.valueAsString, '&regionName=', Aws.REGION]),
    });
    // Verify at the edge with a CloudFront Function (docs/edge.md): off unless EdgeAnteroomPrivateUrl is given.
    new EdgeVerification(this, 'EdgeVerification', eventId.valueAsString);
    new CfnOutput(this, 'SampleWebContentBucketName', { value: bucket.bucketName, description: 'Upload web/dist here (aws s3 sync web/dist s3://<bucket>/)' });
  }
}
