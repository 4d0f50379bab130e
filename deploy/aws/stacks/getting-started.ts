// The getting-started stack (VWR's virtual-waiting-room-on-aws-getting-started template): the core,
// authorizers and sample stacks as nested stacks, wired together, from the published templates (the files of
// deploy/aws/templates, uploaded next to the Lambda zips; see deploy/aws/lambda-code.ts and docs/aws.md).

import { Aws, CfnOutput, CfnStack, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { sourceParameters, type CodeSource } from '../lambda-code.ts';
import { coreLimitParameters, numberParameter, stringParameter, TRUE_FALSE, webAclArnParameter } from './common.ts';
import { PORT_RANGE, SECONDS_RANGE } from '../../../src/aws/environment.ts';
import { TEMPLATE_NAMES } from '../template-names.ts';

export class GettingStartedStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps & { code: CodeSource }) {
    super(scope, id, props);
    this.templateOptions.description = 'Anteroom - Virtual Waiting Room on AWS, getting started (core + authorizers + sample)';
    const eventId = stringParameter(this, 'EventId', 'Unique ID for this instance of the waiting room', { minLength: 1, default: 'Sample' });
    const validity = numberParameter(this, 'ValidityPeriod', 'Token validity period in seconds', 3600, SECONDS_RANGE);
    const events = stringParameter(this, 'EnableEventsGeneration', 'If set to true, metrics related to the Waiting Room will be written to its event bus every minute', { allowedValues: TRUE_FALSE, default: 'false' });
    const redisPort = numberParameter(this, 'RedisPort', 'Port to use when connecting to Redis', 1785, PORT_RANGE);
    const expiryPeriod = numberParameter(this, 'QueuePositionExpiryPeriod', 'Time in seconds after which a served queue position that claimed no token can no longer obtain one', 900, SECONDS_RANGE);
    const expiry = stringParameter(this, 'EnableQueuePositionExpiry', 'If set to false, expiry period is not applied to queue position', { allowedValues: TRUE_FALSE, default: 'true' });
    const incr = stringParameter(this, 'IncrSvcOnQueuePositionExpiry', 'If set to true, serving counter is automatically advanced based on expired queue positions', { allowedValues: TRUE_FALSE, default: 'false' });

    const limits = coreLimitParameters(this);
    const webAclArn = webAclArnParameter(this);
    // The nested templates and the zips, from the deployer's own bucket (deploy/aws/lambda-code.ts).
    const source = sourceParameters(this, props.code);
    const templateUrl = (name: string) =>
      Fn.join('', ['https://', source.bucket.valueAsString, '.s3.', Aws.REGION, '.', Aws.URL_SUFFIX, '/', source.keyPrefix.valueAsString, '/', name, '.template.json']);
    const code = { SourceBucket: source.bucket.valueAsString, SourceKeyPrefix: source.keyPrefix.valueAsString };

    const core = new CfnStack(this, 'CoreModuleStack', {
      templateUrl: templateUrl(TEMPLATE_NAMES.core),
      parameters: {
        EventId: eventId.valueAsString,
        ValidityPeriod: validity.valueAsString,
        EnableEventsGeneration: events.valueAsString,
        RedisPort: redisPort.valueAsString,
        QueuePositionExpiryPeriod: expiryPeriod.valueAsString,
        EnableQueuePositionExpiry: expiry.valueAsString,
        IncrSvcOnQueuePositionExpiry: incr.valueAsString,
        ...Object.fromEntries(Object.entries(limits).map(([name, p]) => [name, p.valueAsString])),
        WebACLArn: webAclArn.valueAsString,
        ...code,
      },
    });
    const authorizers = new CfnStack(this, 'AuthorizersModuleStack', {
      templateUrl: templateUrl(TEMPLATE_NAMES.authorizers),
      parameters: {
        PublicAPIEndpoint: core.getAtt('Outputs.PublicApiInvokeURL').toString(),
        WaitingRoomEventID: eventId.valueAsString,
        IssuerURI: core.getAtt('Outputs.PublicTokenIssuer').toString(),
        ...code,
      },
    });
    const sample = new CfnStack(this, 'SampleModuleStack', {
      templateUrl: templateUrl(TEMPLATE_NAMES.sample),
      parameters: {
        AuthorizerARN: authorizers.getAtt('Outputs.ApiGatewayAuthorizerArn').toString(),
        APIGatewayRegion: Aws.REGION,
        PublicAPIEndpoint: core.getAtt('Outputs.PublicApiInvokeURL').toString(),
        PrivateAPIEndpoint: core.getAtt('Outputs.PrivateApiInvokeURL').toString(),
        EventID: eventId.valueAsString,
      },
    });
    new CfnOutput(this, 'PublicApiInvokeURL', { value: core.getAtt('Outputs.PublicApiInvokeURL').toString() });
    new CfnOutput(this, 'PrivateApiInvokeURL', { value: core.getAtt('Outputs.PrivateApiInvokeURL').toString() });
    new CfnOutput(this, 'WaitingRoomURL', { value: sample.getAtt('Outputs.WaitingRoomURL').toString() });
    new CfnOutput(this, 'ControlPanelURL', { value: sample.getAtt('Outputs.ControlPanelURL').toString() });
    // Where to upload the pages (the sample stack does not load them itself).
    new CfnOutput(this, 'SampleWebContentBucketName', { value: sample.getAtt('Outputs.SampleWebContentBucketName').toString() });
    // The nested core stack's generated name (its logs, alarms and resources are under it).
    new CfnOutput(this, 'CoreStackName', { value: core.getAtt('Outputs.CoreStackName').toString() });
  }
}
