// Serves the built pages (web/dist/, made by `npm run build:web`): the waiting room at /waiting-room-site/ and
// the control panel at /control-panel/. Every file is read once at start, with its brotli and gzip forms: the
// build writes them beside it (<file>.br, <file>.gz, see PRECOMPRESSED); a file without them (or with ones that
// do not decompress to it) is compressed at start. A surge of visitors costs a memory copy per request, never a
// disk read or a compression. Assets under
// assets/ carry a content hash in their names and are cached for a year (`immutable`); HTML is revalidated
// on every load (`no-cache` + ETag → 304), so a new build reaches visitors at once.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants as zlib, gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build:web` writes the pages (also from dist/web/ of a compiled package). */
export const WEB_DIST_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

export const PAGE_PATHS = {
  waitingRoom: '/waiting-room-site/',
  controlPanel: '/control-panel/',
} as const;

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/** The pages call APIs named by their URL parameters (any origin); everything else must come from here. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  'connect-src *',
  "img-src 'self' data:",
  // uPlot positions its legend and cursor through element.style; no inline <style> or style="" is used.
  "style-src 'self'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.map', '.svg', '.txt']);

/** Whether a file is sent compressed (a text type, over 256 bytes). */
export function compressible(rel: string, size: number): boolean {
  return COMPRESSIBLE.has(extname(rel).toLowerCase()) && size > 256;
}

/** The suffixes of the compressed forms `npm run build:web` writes beside each file (vite.config.ts). */
export const PRECOMPRESSED = { br: '.br', gzip: '.gz' } as const;

export interface StaticFile {
  body: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  contentType: string;
  etag: string;
  cacheControl: string;
  html: boolean;
  /** The Vary header (default accept-encoding). */
  vary?: string;
  /** The Content-Security-Policy of an HTML file, when not the pages' own. */
  csp?: string;
}

export interface StaticPagesOptions {
  /** Directory of the built pages. Default: web/dist of this package. */
  root?: string;
  /**
   * Renders the waiting-room page per request (room template, language); when absent, or when the build has no
   * template, the built index.html is served as is.
   */
  waitingPage?: (request: FastifyRequest) => StaticFile | undefined;
}

/** A Fastify plugin (for `StartOptions.plugins`) serving the built pages. */
export function staticPages(options: StaticPagesOptions = {}): (app: FastifyInstance) => void {
  const root = options.root ?? WEB_DIST_DIR;
  return (app) => {
    const files = loadFiles(root);
    if (!files.has(PAGE_PATHS.waitingRoom) || !files.has(PAGE_PATHS.controlPanel)) {
      app.log.warn({ dir: root }, 'web pages not built: run `npm run build:web` to serve the waiting room and control panel');
      for (const path of Object.values(PAGE_PATHS)) app.get(path, notBuilt);
      return;
    }
    for (const [path, file] of files) {
      const render = path === PAGE_PATHS.waitingRoom ? options.waitingPage : undefined;
      app.get(path, (request, reply) => send((render && render(request)) ?? file, request, reply));
      if (path.endsWith('/') && path !== '/') {
        // /waiting-room-site → /waiting-room-site/ (the page's relative asset URLs need the slash), query kept;
        // under the scope's prefix (the gate serves the pages under /_anteroom/: never to the site's own path).
        app.get(path.slice(0, -1), (request, reply) => {
          const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
          return reply.header('cache-control', 'no-store').redirect(`${app.prefix}${path}${query}`, 301);
        });
      }
    }
  };
}

/** Whether the pages under `root` have been built (the solver the OIDC login page imports among them). */
export function pagesBuilt(root: string = WEB_DIST_DIR): boolean {
  return ['waiting-room-site/index.html', 'waiting-room-site/solver.js', 'control-panel/index.html'].every((file) => existsSync(join(root, file)));
}

export function send(file: StaticFile, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply
    .header('content-type', file.contentType)
    .header('cache-control', file.cacheControl)
    .header('etag', file.etag)
    .header('vary', file.vary ?? 'accept-encoding')
    .header('x-content-type-options', 'nosniff');
  if (file.html) {
    reply
      .header('content-security-policy', file.csp ?? CONTENT_SECURITY_POLICY)
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin');
  }
  if (etagMatches(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  const encoding = chooseEncoding(request.headers['accept-encoding'], file);
  if (encoding) {
    reply.header('content-encoding', encoding);
    return reply.send(file[encoding]);
  }
  return reply.send(file.body);
}

function notBuilt(_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply
    .code(503)
    .header('cache-control', 'no-store')
    .header('content-type', 'text/html; charset=utf-8')
    .send('<!doctype html><title>Pages not built</title><p>The pages are not built. Run <code>npm run build:web</code> and restart.</p>');
}

function loadFiles(root: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(root)) return files;
  const all = [...walk(root)];
  const present = new Set(all);
  const compressedForm = (full: string) => full.endsWith(PRECOMPRESSED.br) || full.endsWith(PRECOMPRESSED.gzip);
  for (const full of all) {
    // A .br or .gz whose original is there is that file's compressed form, not a file of its own.
    if (compressedForm(full) && present.has(full.replace(/\.(br|gz)$/, ''))) continue;
    const rel = relative(root, full).split(sep).join('/');
    const body = readFileSync(full);
    const read = (suffix: string) => (present.has(full + suffix) ? readFileSync(full + suffix) : undefined);
    const file = staticFile(body, rel, 11, { br: read(PRECOMPRESSED.br), gzip: read(PRECOMPRESSED.gzip) });
    const path = rel.endsWith('/index.html') ? `/${rel.slice(0, -'index.html'.length)}` : `/${rel}`;
    files.set(path, file);
  }
  return files;
}

/**
 * A file ready to send: its type, ETag, cache policy and compressed forms (`rel`: its path, for the type).
 * `built`: compressed forms made beforehand, used when they decompress to `body` (else compressed here).
 */
export function staticFile(body: Buffer, rel: string, quality = 11, built: { br?: Buffer | undefined; gzip?: Buffer | undefined } = {}): StaticFile {
  const ext = extname(rel).toLowerCase();
  const file: StaticFile = {
    body,
    contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    // Vite names everything under assets/ after its content hash; anything else may change in place.
    cacheControl: rel.startsWith('assets/') ? IMMUTABLE : REVALIDATE,
    html: ext === '.html',
  };
  if (compressible(rel, body.length)) {
    const br = builtForm(built.br, body, brotliDecompressSync) ?? brotliCompress(body, quality);
    const gzip = builtForm(built.gzip, body, gunzipSync) ?? gzipCompress(body);
    if (br.length < body.length) file.br = br;
    if (gzip.length < body.length) file.gzip = gzip;
  }
  return file;
}

/** brotli at `quality` (11, the smallest, for files compressed once). */
export function brotliCompress(body: Buffer, quality = 11): Buffer {
  return brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: quality, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } });
}

export function gzipCompress(body: Buffer): Buffer {
  return gzipSync(body, { level: 9 });
}

/** `compressed` when it decompresses to `body` (a form the build wrote for this very file), else undefined. */
function builtForm(compressed: Buffer | undefined, body: Buffer, decompress: (data: Buffer) => Buffer): Buffer | undefined {
  if (compressed === undefined) return undefined;
  try {
    return decompress(compressed).equals(body) ? compressed : undefined;
  } catch {
    return undefined;
  }
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else yield full;
  }
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === etag || tag === '*';
  });
}

/** brotli if accepted, else gzip if accepted, else none ("q=0" refuses an encoding). */
export function chooseEncoding(header: string | string[] | undefined, file: { br?: Buffer; gzip?: Buffer }): 'br' | 'gzip' | undefined {
  const accepted = new Set<string>();
  for (const part of String(header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q !== undefined && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  if (file.br && (accepted.has('br') || accepted.has('*'))) return 'br';
  if (file.gzip && (accepted.has('gzip') || accepted.has('*'))) return 'gzip';
  return undefined;
}
