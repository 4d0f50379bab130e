// Request bodies. VWR's control panel posts JSON as text/plain (the browser default), so bodies are parsed
// as JSON whatever the Content-Type says. Parsing happens in a preValidation hook, after the private API's
// authentication, which hashes the raw bytes for SigV4 before they are replaced by their JSON value.
// A body nested deeper than MAX_JSON_DEPTH is refused here, at the edge, like one that is not JSON: no
// setting nests deeper than a few levels, and every recursive walk after this one (the rooms API's merge
// patch, the schema) is then safe from a stack overflow.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Errors } from '../domain/errors.ts';

export function acceptAnyContentType(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

/** Arrays and objects inside one another, at most: room settings use 5 (gate.bypass.headers is 3). */
export const MAX_JSON_DEPTH = 32;

/** Replaces the raw body with its JSON value; a body that is not JSON is 400 "Invalid request body". */
export async function parseJsonBody(request: FastifyRequest): Promise<void> {
  const raw = request.body;
  if (!Buffer.isBuffer(raw)) return;
  if (raw.length === 0) {
    request.body = undefined;
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw Errors.invalidRequestBody();
  }
  // A body shorter than the limit cannot nest past it (each level takes at least one byte).
  if (raw.length > MAX_JSON_DEPTH && nestedDeeperThan(value, MAX_JSON_DEPTH)) throw Errors.invalidRequestBody();
  request.body = value;
}

/** Whether `value` has arrays or objects nested more than `limit` deep (a walk with its own stack, no recursion). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
