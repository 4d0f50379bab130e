// Request bodies. VWR's control panel posts JSON as text/plain (the browser default), so bodies are parsed
// as JSON whatever the Content-Type says. The raw bytes are kept for SigV4's payload hash; parsing happens
// in a preValidation hook so that, on the private API, authentication is checked before the body.

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
  request.rawBody = raw;
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
