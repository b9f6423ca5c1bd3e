import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

// Brotli and gzip copies of every text file of the build (file.js.br, file.js.gz), which the server
// sends to browsers that accept them (@fastify/static preCompressed): compressed once, at the best level.
function precompress(): Plugin {
  return {
    name: 'daybook:precompress',
    apply: 'build',
    enforce: 'post',
    writeBundle(output, bundle) {
      const outDir = output.dir ?? 'dist';
      for (const fileName of Object.keys(bundle)) {
        if (!/\.(js|css|html|svg|json)$/.test(fileName)) continue;
        const file = path.join(outDir, fileName);
        const data = readFileSync(file);
        if (data.length < 1024) continue;
        writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
      }
    },
  };
}

// In development the API, account and WebSocket calls go to the Fastify server.
const target = process.env.DAYBOOK_SERVER_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    rolldownOptions: {
      // Building a zod schema has no effect beyond its value: one that no code of a chunk uses is
      // left out of it, instead of being built as the chunk loads (the contracts define many per file).
      treeshake: { manualPureFunctions: ['z'] },
      output: {
        // zod and the setup that turns its eval probe off (src/zod-setup.ts) share a chunk, so the
        // setup runs before any chunk that builds schemas (the contracts, shared by lazy pages):
        // otherwise the probe runs first and the CSP reports it on every page.
        codeSplitting: {
          groups: [
            { name: 'zod', test: /[\\/]node_modules[\\/]zod[\\/]|[\\/]src[\\/]zod-setup\.ts$/, priority: 10 },
            // Everything the first screen needs in one chunk instead of a dozen small shared ones.
            { name: 'shell', tags: ['$initial'], priority: 5 },
          ],
        },
      },
    },
  },
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
