// Builds the pages under web/ (waiting room, control panel) into web/dist/, which `anteroom serve` serves.
// Relative asset URLs (base './') let the same build be hosted under any path prefix, on a CDN or on S3.
import { fileURLToPath } from 'node:url';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { Languages, renderWaitingPage } from './src/web/page-template.ts';
import { brotliCompress, compressible, gzipCompress, PRECOMPRESSED } from './src/web/static-pages.ts';

const I18N_DIR = fileURLToPath(new URL('./web/waiting-room-site/i18n/', import.meta.url));

/**
 * The waiting-room page is a Mustache template (src/web/page-template.ts): the built HTML is kept as
 * waiting-room-site/page.mustache with the translations beside it (i18n/<lang>.json), for the server to render
 * per room and language; index.html is that template rendered in English, so the built site still works when
 * hosted as plain files (a CDN, S3), as VWR's did.
 */
function waitingPageTemplate(): Plugin {
  return {
    name: 'anteroom-waiting-page-template',
    apply: 'build',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const html = bundle['waiting-room-site/index.html'];
      if (!html || html.type !== 'asset') return;
      const template = String(html.source);
      this.emitFile({ type: 'asset', fileName: 'waiting-room-site/page.mustache', source: template });
      for (const name of readdirSync(I18N_DIR).filter((n) => n.endsWith('.json'))) {
        this.emitFile({ type: 'asset', fileName: `waiting-room-site/i18n/${name}`, source: readFileSync(`${I18N_DIR}${name}`) });
      }
      // Hosted as plain files, the page may call only its own origin and those given here at build time
      // (ANTEROOM_API_ORIGINS="https://api.example.com …"; the server renders each room's allowed_api_origins).
      const apiOrigins = (process.env.ANTEROOM_API_ORIGINS ?? '').split(/[\s,]+/).filter(Boolean);
      html.source = renderWaitingPage({
        room: { event_id: 'Sample', allowed_api_origins: apiOrigins },
        phase: 'waiting',
        lang: 'en',
        languages: Languages.fromDir(I18N_DIR),
        defaultTemplate: template,
        nowMs: 0,
      });
    },
  };
}

/**
 * Writes <file>.br and <file>.gz beside every text file of the build, as the server would compress it: a node
 * starting reads them instead of compressing the pages itself (a third of a node's start).
 */
function precompressed(): Plugin {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
  return {
    name: 'anteroom-precompressed',
    apply: 'build',
    writeBundle(options) {
      for (const file of walk(options.dir as string)) {
        const body = readFileSync(file);
        if (!compressible(file, body.length)) continue;
        writeFileSync(file + PRECOMPRESSED.br, brotliCompress(body));
        writeFileSync(file + PRECOMPRESSED.gzip, gzipCompress(body));
      }
    },
  };
}

const SOLVER_ENTRY = 'waiting-room-site/solver';

const page = (name: string) => fileURLToPath(new URL(`./web/${name}/index.html`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: './',
  publicDir: false,
  plugins: [waitingPageTemplate(), precompressed()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every file name under assets/ carries a content hash, so the server can mark them immutable.
    assetsDir: 'assets',
    // No inline script in the HTML (the pages are served with a strict Content-Security-Policy).
    modulePreload: { polyfill: false },
    rollupOptions: {
      // The solver entry keeps its exports (Vite drops an app entry's by default).
      preserveEntrySignatures: 'exports-only',
      input: {
        'waiting-room-site': page('waiting-room-site'),
        'control-panel': page('control-panel'),
        'control-panel-report': fileURLToPath(new URL('./web/control-panel/report.html', import.meta.url)),
        // The draw, checked in the visitor's browser (docs/rooms.md "Checking a place").
        'draw-check': page('draw-check'),
        // The waiting room's proof-of-work solver as a module of its own, at a name that does not change, for
        // the OpenID Connect login page (src/oidc/login-page.ts) to import.
        [SOLVER_ENTRY]: fileURLToPath(new URL('./web/waiting-room-site/solver.ts', import.meta.url)),
      },
      output: {
        // Code both pages use goes in one named chunk (the default names it after whichever module came first);
        // the solver in one of its own, so the waiting-room page loads it by a hashed name, as everything else.
        manualChunks: (id) =>
          id.includes('/web/shared/') ? 'shared' : /\/web\/waiting-room-site\/proof-of-work\.ts$|\/node_modules\/altcha-lib\//.test(id) ? 'proof-of-work' : undefined,
        entryFileNames: (chunk) => (chunk.name === SOLVER_ENTRY ? `${SOLVER_ENTRY}.js` : 'assets/[name]-[hash].js'),
      },
    },
  },
});
