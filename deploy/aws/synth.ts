// `npm run synth`: synthesises the seven stacks and writes their templates to deploy/aws/templates as
// <name>.template.json — deterministic (no asset hashes, timestamps or construct paths), ready to commit and
// to upload next to the Lambda zips. Their code comes from the SourceBucket / SourceKeyPrefix parameters:
// --bucket and --key-prefix give those parameters defaults (the committed templates have none for the bucket).
// --out <dir> writes elsewhere (for a release in your own bucket, without touching the committed ones).
//
//   node deploy/aws/synth.ts [--bucket <name>] [--key-prefix <prefix>] [--redis-node-type cache.t4g.small]
//
// For `cdk deploy`, see deploy/aws/cdk.json and docs/aws.md.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_CODE_SOURCE } from './lambda-code.ts';
import { buildApp, TEMPLATE_NAMES } from './templates.ts';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { bucket: { type: 'string' }, 'key-prefix': { type: 'string' }, 'redis-node-type': { type: 'string' }, out: { type: 'string' } } });
// --bucket / --key-prefix: the defaults of the SourceBucket / SourceKeyPrefix parameters (your own bucket).
const code = {
  ...DEFAULT_CODE_SOURCE,
  ...(values.bucket ? { bucket: values.bucket } : {}),
  ...(values['key-prefix'] ? { keyPrefix: values['key-prefix'] } : {}),
};
const redisNodeType = values['redis-node-type'];
const { app } = buildApp({ outdir: join(here, 'cdk.out'), code, ...(redisNodeType ? { redisNodeType } : {}) });
const assembly = app.synth();
const out = values.out ?? join(here, 'templates');
mkdirSync(out, { recursive: true });
for (const name of Object.values(TEMPLATE_NAMES)) {
  const artifact = assembly.getStackByName(name);
  const text = `${JSON.stringify(JSON.parse(readFileSync(join(assembly.directory, artifact.templateFile), 'utf8')), null, 1)}\n`;
  writeFileSync(join(out, `${name}.template.json`), text);
  console.log(join(out, `${name}.template.json`));
}
