import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built to static files the gateway serves under /ui (gateway/src/routes/ui.ts); nothing is fetched at run time.
export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The gateway's CSP allows no inline script: keep every module a file.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    // `npm run dev -w ui`: the page on Vite, /api and the live-update socket /ws proxied to a gateway on :8080.
    proxy: { '/api': 'http://127.0.0.1:8080', '/ws': { target: 'http://127.0.0.1:8080', ws: true } },
  },
});
