// The web page at `/`: plain TypeScript and CSS, bundled by vite into web/dist (`npm run
// build:web`, run by `npm run setup`), served by the API (api/web.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Small enough to inline nothing but keep one CSS and one JS file.
    assetsInlineLimit: 0,
  },
});
