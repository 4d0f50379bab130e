// Builds the CloudFront Function of docs/edge.md: deploy/aws/edge/anteroom-edge-cloudfront.js with the shared
// rules (deploy/nginx/anteroom-edge-core.js, an ES module, turned into an expression: a CloudFront Function is
// one file) and the rooms' routes (as GET /private/edge_config exports them) put in.

import { readFileSync } from 'node:fs';

export interface CloudFrontRoute {
  host?: string;
  path: string;
  event_id: string;
  bypass_paths: string[];
}

const read = (file: string): string => readFileSync(new URL(file, import.meta.url), 'utf8');

export function buildEdgeFunction(routes: readonly CloudFrontRoute[]): string {
  const core = read('../../nginx/anteroom-edge-core.js');
  const exported = /\nexport default (\{[^}]*\});\s*$/.exec(core);
  if (!exported) throw new Error('anteroom-edge-core.js must end with one `export default { … };`');
  const body = core.slice(0, exported.index);
  const coreExpression = `(function () {\n${body}\nreturn ${exported[1]};\n})()`;
  const template = read('./anteroom-edge-cloudfront.js');
  if (!template.includes('/*ANTEROOM_CORE*/ null') || !template.includes('/*ANTEROOM_ROUTES*/ []')) throw new Error('template markers missing');
  return compact(template.replace('/*ANTEROOM_ROUTES*/ []', () => JSON.stringify(routes)).replace('/*ANTEROOM_CORE*/ null', () => coreExpression));
}

/** CloudFront Functions are at most 10 KB: what a function is built from must fit once its comments are gone. */
export const CLOUDFRONT_FUNCTION_MAX_BYTES = 10_240;

/**
 * `code` without its comment lines ("//", "/*", " *") and indentation: the same program (no statement of these
 * files starts with "*" or "/", and no string or template literal spans lines), in fewer bytes.
 */
export function compact(code: string): string {
  return code
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//') && !line.startsWith('/*') && !line.startsWith('*'))
    .join('\n');
}
