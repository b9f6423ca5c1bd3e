// `npm run dev`: the API server (restarting on change) and Vite's dev server with hot reload,
// which proxies API, account and WebSocket calls to the API server.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
const apiPort = process.env.PORT ?? '3000';

spawnSync(bin('tsx'), ['scripts/db.ts', 'generate'], { cwd: ROOT, stdio: 'inherit' });

const children = [
  spawn(bin('tsx'), ['watch', '--clear-screen=false', 'apps/server/src/server.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: apiPort,
      PUBLIC_URL: process.env.PUBLIC_URL ?? 'http://localhost:5173',
    },
  }),
  spawn(bin('vite'), ['apps/web'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, DAYBOOK_SERVER_URL: `http://127.0.0.1:${apiPort}` },
  }),
];

const stopAll = () => {
  for (const child of children) child.kill('SIGTERM');
};
process.on('SIGINT', stopAll);
process.on('SIGTERM', stopAll);
for (const child of children) child.on('exit', stopAll);
