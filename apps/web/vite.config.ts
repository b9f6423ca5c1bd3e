import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In development the API, account and WebSocket calls go to the Fastify server.
const target = process.env.DAYBOOK_SERVER_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: {
    port: 5173,
    proxy: {
      '/api': target,
      '/_allauth': target,
      // The server's own pages: connections, the providers' callbacks, the plain sign-out form.
      '/accounts/': target,
      '/ws': { target: target.replace(/^http/, 'ws'), ws: true },
    },
  },
});
