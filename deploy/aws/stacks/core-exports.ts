// What the core stack exports for stacks built on it (the OpenID stack), as CloudFormation exports named
// `anteroom-<EventId>-<name>`, so that a stack given only VWR's parameters (EventID among them) finds its core:
// the resources their functions use, whose identity changes only when the resource
// is replaced. The waiting room's settings (ValidityPeriod, Redis endpoint, ...) are deliberately not exports
// (an export cannot change while another stack imports it, which would freeze the core's parameters): they are
// in the CoreSettings secret, read by the function at cold start (src/aws/core-settings.ts).

import { CfnOutput, Fn, type Stack } from 'aws-cdk-lib';

export const CORE_EXPORTS = {
  CoreSettingsSecretArn: 'Secret holding the settings document of this waiting room (no secret values)',
  FunctionSubnetIds: 'Subnets of the functions, comma-separated',
  FunctionSecurityGroupId: 'Security group of the functions (Redis admits it)',
  RedisAuthSecretArn: 'Secret holding the ElastiCache AUTH token',
  TokenTableArn: 'DynamoDB table of token records',
  EventBusArn: 'EventBridge bus of the events',
  SigningKeysSecretPrefix: 'Secrets Manager name prefix of the signing keys',
  IntakeQueueArn: 'SQS queue of joins (the intake consumer numbers them)',
  IntakeQueueUrl: 'URL of the SQS queue of joins',
} as const;

export type CoreExport = keyof typeof CORE_EXPORTS;

/** The prefix of the exports of the core of `eventId`. Export names are unique per account and Region: so is an
 * event ID among Anteroom core stacks (a second core with the same EventId fails to create; docs/aws.md). */
export const exportPrefix = (eventId: string) => Fn.join('-', ['anteroom', eventId]);

/** The core stack's outputs, each exported as `anteroom-<EventId>-<name>`. */
export function exportCoreValues(stack: Stack, eventId: string, values: Record<CoreExport, string>): void {
  for (const name of Object.keys(CORE_EXPORTS) as CoreExport[]) {
    new CfnOutput(stack, name, {
      value: values[name],
      description: CORE_EXPORTS[name],
      exportName: Fn.join('-', [exportPrefix(eventId), name]),
    });
  }
}

/** The value the core stack of `eventId` exports as `name`. */
export function importCoreValue(eventId: string, name: CoreExport): string {
  return Fn.importValue(Fn.join('-', [exportPrefix(eventId), name]));
}
