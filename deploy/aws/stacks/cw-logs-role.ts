// VWR's virtual-waiting-room-on-aws-api-gateway-cw-logs-role template: the account-level role API Gateway
// needs to write execution logs (the core stack's stages log errors). Deploy once per account and Region, only
// if API Gateway has no CloudWatch log role yet (see docs/aws.md).

import { Stack, type StackProps } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export class ApiGatewayCloudWatchLogsRoleStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, API Gateway CloudWatch logs role';
    const role = new Role(this, 'CloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    new CfnAccount(this, 'Account', { cloudWatchRoleArn: role.roleArn });
  }
}
