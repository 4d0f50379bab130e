// `npm run nag`: the AWS Solutions rules of cdk-nag over the synthesised stacks (the ones `npm run synth` writes,
// with their code from a bucket parameter). Every finding is either fixed in the stacks or acknowledged below,
// with its reason; the script prints the counts and fails on any finding not acknowledged (test/aws/nag.test.ts
// runs it too). The acknowledgements are applied here only, on a synthesis of its own: the committed
// templates carry no cdk-nag metadata.
//
//   node deploy/aws/nag.ts [--json]

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations, type Stack } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { DEFAULT_CODE_SOURCE } from './lambda-code.ts';
import { buildApp, TEMPLATE_NAMES, type TemplateKey } from './templates.ts';

export interface Acknowledgement {
  /** The rule, and for a rule with several findings per resource the finding: AwsSolutions-IAM5[Resource::…]. */
  id: string;
  /** The stack; with `paths`, only those constructs of it (ids under the stack, '/'-separated). */
  stack: TemplateKey;
  paths?: readonly string[];
  reason: string;
}

const BASIC_EXECUTION = 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]';
const VPC_ACCESS = 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]';
const KEYS_PREFIX = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:<AWS::StackName>/anteroom/signing-keys/*]';
const OPENID_KEYS_PREFIX = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:anteroom-<EventID>-SigningKeysSecretPrefix*]';
const PRIVATE_API_ROUTES = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<PrivateWaitingRoomApiC1BE77D0>/api/*/*]';

const LOGS_ROLE = 'Lambda\'s managed policy for writing the function\'s own logs (CreateLogStream/PutLogEvents; the log group is the stack\'s, with retention): the one AWS keeps current';
const VPC_ROLE = 'Lambda needs it to attach the function to the VPC (ec2:CreateNetworkInterface and friends, which take no resource narrower than *)';
const KEYS = 'Signing keys are secrets created at run time, one per event, named <prefix><event id>; Secrets Manager appends a random suffix to every secret ARN, so a name prefix is the narrowest resource that exists';
const NO_COGNITO = 'No Cognito user pool: visitors are anonymous (VWR\'s public contract), the private API uses IAM, the sample API the waiting room\'s own token authorizer';
const OPEN_GEO = 'A waiting room serves every country; geographic restriction is the operator\'s choice, not the template\'s';
const DEFAULT_CERTIFICATE = 'The distribution uses CloudFront\'s default *.cloudfront.net certificate (no custom domain in the templates), whose security policy cannot be chosen; a custom domain with TLSv1.2_2021 is the operator\'s addition';
const FUNCTION_VALIDATES = 'Every request is validated by the function (the same Fastify schemas as any node) and refused with the contract\'s 4xx JSON errors; API Gateway models would duplicate them with other error bodies';

export const ACKNOWLEDGEMENTS: readonly Acknowledgement[] = [
  // ---- core ----
  { stack: 'core', id: 'AwsSolutions-SMG4', paths: ['RedisAuthToken'], reason: 'ElastiCache AUTH token: rotating it is ElastiCache\'s two-step AUTH rotation (ModifyReplicationGroup ROTATE then SET) with every function re-reading it; not automated (VWR did not either), documented in docs/aws.md' },
  { stack: 'core', id: 'AwsSolutions-SMG4', paths: ['PublicApiOriginKey'], reason: 'The API key CloudFront sends to the public API as an origin header, so that only CloudFront reaches the stage; rotating it means updating the usage plan key and the distribution together (a stack update)' },
  { stack: 'core', id: 'AwsSolutions-SMG4', paths: ['CoreSettings'], reason: 'Holds no secret value: names and settings of the waiting room for the OpenID stack\'s function (src/aws/core-settings.ts)' },
  { stack: 'core', id: 'AwsSolutions-AEC5', paths: ['RedisReplicationGroup'], reason: 'RedisPort is VWR\'s parameter with VWR\'s default (6379); Redis admits only the functions\' security group, and AUTH and TLS are on' },
  { stack: 'core', id: 'AwsSolutions-APIG2', paths: ['PublicWaitingRoomApi', 'PrivateWaitingRoomApi'], reason: FUNCTION_VALIDATES },
  { stack: 'core', id: 'AwsSolutions-APIG3', paths: ['PublicWaitingRoomApi/DeploymentStage.api'], reason: 'The public stage is reached through CloudFront only (its API key), whose optional web ACL (WafRateLimit or WebACLArn) filters before it; the stage is throttled' },
  { stack: 'core', id: 'AwsSolutions-APIG3', paths: ['PrivateWaitingRoomApi/DeploymentStage.api'], reason: 'IAM-authenticated (SigV4) callers of the ProtectedAPIGroup only; throttled' },
  { stack: 'core', id: 'AwsSolutions-APIG4', reason: 'The public API is VWR\'s public contract for anonymous visitors (CloudFront\'s API key required); the private API\'s methods use IAM; OPTIONS answer CORS preflights, which carry no credentials' },
  { stack: 'core', id: 'AwsSolutions-COG4', reason: NO_COGNITO },
  { stack: 'core', id: BASIC_EXECUTION, reason: LOGS_ROLE },
  { stack: 'core', id: VPC_ACCESS, reason: VPC_ROLE },
  { stack: 'core', id: KEYS_PREFIX, reason: KEYS },
  { stack: 'core', id: PRIVATE_API_ROUTES, paths: ['ProtectedAPIGroup'], reason: 'The ProtectedAPIGroup is who may call the private API (VWR\'s): every route of its one stage' },
  { stack: 'core', id: 'AwsSolutions-S1', paths: ['AccessLogsBucket'], reason: 'The bucket that receives the access logs: logging it would log into itself or need one more bucket' },
  { stack: 'core', id: 'AwsSolutions-CFR1', paths: ['PublicApiCloudFront'], reason: OPEN_GEO },
  { stack: 'core', id: 'AwsSolutions-CFR2', paths: ['PublicApiCloudFront'], reason: 'A web ACL is a parameter (WafRateLimit, or WebACLArn of one made elsewhere), on by the operator\'s choice: cdk-nag cannot see through the condition' },
  { stack: 'core', id: 'AwsSolutions-CFR4', paths: ['PublicApiCloudFront'], reason: DEFAULT_CERTIFICATE },
  { stack: 'core', id: 'AwsSolutions-SQS3', paths: ['CdnPurgeQueue'], reason: 'A purge request is worthless after 60 s (every answer cached before the reset has expired), so failures are dropped, not kept for anyone to redrive (src/aws/cloudfront-purge.ts)' },
  // ---- openid ----
  { stack: 'openid', id: 'AwsSolutions-SMG4', paths: ['ClientSecret'], reason: 'The relying party\'s client secret: rotating it means changing the relying party\'s configuration at the same time, an operator\'s step (docs/aws.md)' },
  { stack: 'openid', id: 'AwsSolutions-SMG4', paths: ['RedirectUris'], reason: 'An allow-list of redirect URIs, not a credential' },
  { stack: 'openid', id: 'AwsSolutions-APIG2', paths: ['RestAPI'], reason: FUNCTION_VALIDATES },
  { stack: 'openid', id: 'AwsSolutions-APIG4', reason: 'OpenID Connect endpoints are public by the protocol: the relying party and the visitor\'s browser call them without AWS credentials; /token authenticates the client itself (client secret)' },
  { stack: 'openid', id: 'AwsSolutions-COG4', reason: NO_COGNITO },
  { stack: 'openid', id: BASIC_EXECUTION, reason: LOGS_ROLE },
  { stack: 'openid', id: VPC_ACCESS, reason: VPC_ROLE },
  { stack: 'openid', id: OPENID_KEYS_PREFIX, reason: KEYS },
  { stack: 'openid', id: 'AwsSolutions-CFR1', paths: ['OpenIDWebContentCloudFront'], reason: OPEN_GEO },
  { stack: 'openid', id: 'AwsSolutions-CFR2', paths: ['OpenIDWebContentCloudFront'], reason: 'VWR\'s login-page distribution, over an empty private bucket (the login page is served by the API, which has its own optional web ACL, WafRateLimit)' },
  { stack: 'openid', id: 'AwsSolutions-CFR4', paths: ['OpenIDWebContentCloudFront'], reason: DEFAULT_CERTIFICATE },
  // ---- sample, authorizers, inlet, API Gateway logging role ----
  { stack: 'sample', id: 'AwsSolutions-APIG2', paths: ['RestAPI'], reason: FUNCTION_VALIDATES },
  { stack: 'sample', id: 'AwsSolutions-APIG3', paths: ['RestAPI/DeploymentStage.api'], reason: 'The sample shop\'s demo API, behind the waiting room\'s token authorizer and throttled (100/s)' },
  { stack: 'sample', id: 'AwsSolutions-COG4', reason: NO_COGNITO },
  { stack: 'sample', id: 'AwsSolutions-CFR1', paths: ['SampleWebContentCloudFront'], reason: OPEN_GEO },
  { stack: 'sample', id: 'AwsSolutions-CFR2', paths: ['SampleWebContentCloudFront'], reason: 'The sample\'s static pages: nothing behind them to flood (the waiting room\'s own API has its limits)' },
  { stack: 'sample', id: 'AwsSolutions-CFR4', paths: ['SampleWebContentCloudFront'], reason: DEFAULT_CERTIFICATE },
  { stack: 'sample', id: BASIC_EXECUTION, paths: ['EdgeVerification/EdgeKeyRotation'], reason: LOGS_ROLE },
  { stack: 'authorizers', id: BASIC_EXECUTION, reason: LOGS_ROLE },
  { stack: 'inlet', id: BASIC_EXECUTION, reason: LOGS_ROLE },
  { stack: 'cwLogsRole', id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]', reason: 'The account\'s API Gateway logging role, with the managed policy API Gateway documents for it' },
];

export interface NagFinding {
  rule: string;
  level: string;
  constructPath: string;
}

interface ReportViolation {
  ruleName: string;
  severity: string;
  violatingConstructs: Array<{ constructPath: string }>;
}

function constructAt(stack: Stack, path: string): IConstruct {
  let node: IConstruct = stack;
  for (const id of path.split('/')) {
    const child = node.node.tryFindChild(id);
    if (!child) throw new Error(`${stack.stackName}: no construct ${path} to acknowledge on`);
    node = child;
  }
  return node;
}

/**
 * The findings of the AWS Solutions checks over the stacks, with the acknowledgements above applied or not
 * (cdk-nag reports acknowledged findings nowhere: the count of those is the difference of the two).
 */
export function nagFindings(options: { acknowledge: boolean }): NagFinding[] {
  const outdir = mkdtempSync(join(tmpdir(), 'anteroom-nag-'));
  try {
    const { app, stacks } = buildApp({ outdir, code: DEFAULT_CODE_SOURCE });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    if (options.acknowledge) {
      for (const ack of ACKNOWLEDGEMENTS) {
        const stack = stacks[ack.stack];
        if (!stack) throw new Error(`no stack ${ack.stack}`);
        for (const path of ack.paths ?? [undefined]) {
          Validations.of(path ? constructAt(stack, path) : stack).acknowledge({ id: ack.id, reason: ack.reason });
        }
      }
    }
    // The CDK prints the validation report to the console as well: keep it out of this script's output.
    const log = console.log;
    const error = console.error;
    console.log = console.error = () => {};
    try {
      app.synth();
    } catch (error) {
      // An error-level finding fails the synthesis, after the report is written.
      if (!/Validation failed/.test(String(error))) throw error;
    } finally {
      console.log = log;
      console.error = error;
    }
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ pluginName: string; violations: ReportViolation[] }>;
    };
    // (A plugin with nothing left to report is left out of the report.)
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
    return (nag?.violations ?? []).flatMap((v) => v.violatingConstructs.map((c) => ({ rule: v.ruleName, level: v.severity, constructPath: c.constructPath })));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The acknowledgement that covers a finding (by its rule and construct), if any. */
export function acknowledgementOf(finding: NagFinding): Acknowledgement | undefined {
  return ACKNOWLEDGEMENTS.find((ack) => {
    if (ack.id !== finding.rule) return false;
    const stackName = TEMPLATE_NAMES[ack.stack];
    if (!ack.paths) return finding.constructPath === stackName || finding.constructPath.startsWith(`${stackName}/`);
    return ack.paths.some((path) => finding.constructPath === `${stackName}/${path}` || finding.constructPath.startsWith(`${stackName}/${path}/`));
  });
}

/** Findings per rule, the bracketed finding folded into its rule. */
export function countByRule(findings: readonly NagFinding[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of findings) {
    const rule = f.rule.replace(/\[.*$/, '');
    counts[rule] = (counts[rule] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

if (import.meta.main) {
  const all = nagFindings({ acknowledge: false });
  const open = nagFindings({ acknowledge: true });
  const acknowledged = all.filter((f) => acknowledgementOf(f) !== undefined);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ open, acknowledged: acknowledged.map((f) => ({ ...f, reason: acknowledgementOf(f)!.reason })) }, null, 1));
  } else {
    console.log(`cdk-nag AwsSolutions: ${all.length} findings; ${acknowledged.length} acknowledged, ${open.length} open`);
    console.log('by rule:', countByRule(all));
    for (const f of open) console.log(`OPEN ${f.level} ${f.rule} at ${f.constructPath}`);
  }
  process.exitCode = open.length > 0 ? 1 : 0;
}
