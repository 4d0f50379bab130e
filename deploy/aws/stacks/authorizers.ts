// The authorizers stack (VWR's virtual-waiting-room-on-aws-authorizers template): an API Gateway Lambda
// authorizer that admits the access tokens of one waiting room (src/aws/authorizer.ts). Not in a VPC: it only
// fetches the public key from the public API (through CloudFront) and caches it.

import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Architecture, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { lambdaCode, type CodeSource } from '../lambda-code.ts';
import { functionAlarms, logGroup, stringParameter } from './common.ts';

export class AuthorizersStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, API Gateway authorizers';
    const endpoint = stringParameter(this, 'PublicAPIEndpoint', 'Public endpoint for the virtual waiting room APIs');
    const eventId = stringParameter(this, 'WaitingRoomEventID', 'Event ID of waiting room');
    const issuer = stringParameter(this, 'IssuerURI', 'Issuer URI of the public keys and tokens');
    const fn = new LambdaFn(this, 'ApiGatewayAuthorizer', {
      description: 'Anteroom token authorizer',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: lambdaCode(this, 'authorizer', props.code),
      memorySize: 512,
      timeout: Duration.seconds(10),
      environment: {
        PUBLIC_API_ENDPOINT: endpoint.valueAsString,
        WAITING_ROOM_EVENT_ID: eventId.valueAsString,
        ISSUER: issuer.valueAsString,
      },
      logGroup: logGroup(this, 'ApiGatewayAuthorizerLogs'),
    });
    functionAlarms(this, 'ApiGatewayAuthorizer', fn);
    new CfnOutput(this, 'ApiGatewayAuthorizerArn', { value: fn.functionArn, description: 'ARN of the API Gateway Lambda authorizer' });
  }
}
