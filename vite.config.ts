// Builds the pages under web/ (waiting room, control panel) into web/dist/, which `anteroom serve` serves.
// Relative asset URLs (base './') let the same build be hosted under any path prefix, on a CDN or on S3.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const page = (name: string) => fileURLToPath(new URL(`./web/${name}/index.html`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: './',
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every file name under assets/ carries a content hash, so the server can mark them immutable.
    assetsDir: 'assets',
    // No inline script in the HTML (the pages are served with a strict Content-Security-Policy).
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: {
        'waiting-room-site': page('waiting-room-site'),
        'control-panel': page('control-panel'),
      },
      // Code both pages use goes in one named chunk (the default names it after whichever module came first).
      output: { manualChunks: (id) => (id.includes('/web/shared/') ? 'shared' : undefined) },
    },
  },
});
