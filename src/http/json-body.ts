// Request bodies. VWR's control panel posts JSON as text/plain (the browser default), so bodies are parsed
// as JSON whatever the Content-Type says. Parsing happens in a preValidation hook, after the private API's
// authentication, which hashes the raw bytes for SigV4 before they are replaced by their JSON value.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Errors } from '../domain/errors.ts';

export function acceptAnyContentType(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

/** Replaces the raw body with its JSON value; a body that is not JSON is 400 "Invalid request body". */
export async function parseJsonBody(request: FastifyRequest): Promise<void> {
  const raw = request.body;
  if (!Buffer.isBuffer(raw)) return;
  if (raw.length === 0) {
    request.body = undefined;
    return;
  }
  try {
    request.body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw Errors.invalidRequestBody();
  }
}
