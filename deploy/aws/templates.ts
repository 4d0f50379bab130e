// The CDK app: the seven stacks, named like VWR's templates.

import { App, BootstraplessSynthesizer, DefaultStackSynthesizer, type Stack } from 'aws-cdk-lib';
import { DEFAULT_CODE_SOURCE, type CodeSource } from './lambda-code.ts';
import { AuthorizersStack } from './stacks/authorizers.ts';
import { CoreStack } from './stacks/core.ts';
import { ApiGatewayCloudWatchLogsRoleStack } from './stacks/cw-logs-role.ts';
import { GettingStartedStack } from './stacks/getting-started.ts';
import { InletStrategyStack } from './stacks/inlet.ts';
import { OpenIdStack } from './stacks/openid.ts';
import { SampleStack } from './stacks/sample.ts';
import { TEMPLATE_NAMES } from './template-names.ts';

export { TEMPLATE_NAMES };

export type TemplateKey = keyof typeof TEMPLATE_NAMES;

export interface AnteroomApp {
  app: App;
  stacks: Partial<Record<TemplateKey, Stack>>;
}

export function buildApp(options: { outdir?: string; code?: CodeSource; redisNodeType?: string } = {}): AnteroomApp {
  const code = options.code ?? DEFAULT_CODE_SOURCE;
  const app = new App({
    ...(options.outdir ? { outdir: options.outdir } : {}),
    analyticsReporting: false,
    // Deterministic templates: no construct paths in resource metadata.
    context: { 'aws:cdk:enable-path-metadata': false, 'aws:cdk:enable-asset-metadata': false },
  });
  // Published templates reference their code in S3 themselves (no CDK bootstrap); `cdk deploy` uses assets.
  const synthesizer = () => (code.mode === 'bucket' ? new BootstraplessSynthesizer() : new DefaultStackSynthesizer());
  const props = { code, synthesizer: undefined as unknown as ReturnType<typeof synthesizer> };
  const make = <T extends Stack>(factory: (p: typeof props) => T): T => factory({ ...props, synthesizer: synthesizer() });
  const stacks: AnteroomApp['stacks'] = {
    core: make((p) => new CoreStack(app, TEMPLATE_NAMES.core, { ...p, ...(options.redisNodeType ? { redisNodeType: options.redisNodeType } : {}) })),
    authorizers: make((p) => new AuthorizersStack(app, TEMPLATE_NAMES.authorizers, p)),
    inlet: make((p) => new InletStrategyStack(app, TEMPLATE_NAMES.inlet, p)),
    sample: make((p) => new SampleStack(app, TEMPLATE_NAMES.sample, p)),
    cwLogsRole: make((p) => new ApiGatewayCloudWatchLogsRoleStack(app, TEMPLATE_NAMES.cwLogsRole, p)),
    openid: make((p) => new OpenIdStack(app, TEMPLATE_NAMES.openid, p)),
  };
  // Needs published templates: see its file.
  if (code.mode === 'bucket') {
    stacks.gettingStarted = make((p) => new GettingStartedStack(app, TEMPLATE_NAMES.gettingStarted, p));
  }
  return { app, stacks };
}
