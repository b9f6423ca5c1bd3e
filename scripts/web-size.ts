// Initial JavaScript of the built web app: what index.html loads before the first render (the entry,
// its modulepreloads and every chunk they import statically), gzipped per file and in total.
//   npx tsx scripts/web-size.ts [--build] [distDir]     (default apps/web/dist; --build runs vite first)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export type WebSizeFile = { file: string; bytes: number; gzip: number };
export type WebSize = { files: WebSizeFile[]; totalGzip: number };

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const defaultDistDir = path.join(root, 'apps/web/dist');

/** The budget for initial JavaScript, in gzipped bytes (150 KB). */
export const INITIAL_JS_BUDGET = 150 * 1024;

const gzipSize = (data: Buffer) => gzipSync(data).length;

// Static imports only: `import x from "./a.js"`, `import "./a.js"`, `export * from "./a.js"`; a dynamic
// `import("./a.js")` loads later and is not counted.
const staticImport = /(?:^|[;\s}])(?:import|export)\s*(?:[\w*$\s{},]*?\s*from\s*)?["']([^"']+\.js)["']/g;

/** Initial JS of a built app in distDir, following the chunks' static imports. */
export function initialJsGzip(distDir = defaultDistDir): WebSize {
  const html = readFileSync(path.join(distDir, 'index.html'), 'utf8');
  const queue: string[] = [];
  for (const tag of html.match(/<(script|link)\b[^>]*>/g) ?? []) {
    const src = /\b(?:src|href)="([^"]+\.js)"/.exec(tag)?.[1];
    const isEntry = tag.startsWith('<script') && /type="module"/.test(tag);
    const isPreload = tag.startsWith('<link') && /rel="modulepreload"/.test(tag);
    if (src && (isEntry || isPreload)) queue.push(src.replace(/^\//, ''));
  }
  const seen = new Set<string>();
  const files: WebSizeFile[] = [];
  while (queue.length) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const data = readFileSync(path.join(distDir, file));
    files.push({ file, bytes: data.length, gzip: gzipSize(data) });
    for (const [, spec = ''] of data.toString('utf8').matchAll(staticImport)) {
      if (spec.startsWith('.')) queue.push(path.posix.join(path.posix.dirname(file), spec));
      else if (spec.startsWith('/')) queue.push(spec.slice(1));
    }
  }
  files.sort((a, b) => b.gzip - a.gzip);
  return { files, totalGzip: files.reduce((sum, f) => sum + f.gzip, 0) };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const distDir = path.resolve(args.find((a) => !a.startsWith('--')) ?? defaultDistDir);
  if (args.includes('--build')) {
    execFileSync('npx', ['vite', 'build', 'apps/web', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  }
  const { files, totalGzip } = initialJsGzip(distDir);
  for (const f of files) console.log(`${kb(f.gzip).padStart(10)} gzip ${kb(f.bytes).padStart(10)} raw  ${f.file}`);
  const verdict = totalGzip <= INITIAL_JS_BUDGET ? 'within' : 'OVER';
  console.log(`${kb(totalGzip).padStart(10)} gzip total initial JS (${verdict} the ${kb(INITIAL_JS_BUDGET)} budget)`);
  if (args.includes('--check') && totalGzip > INITIAL_JS_BUDGET) process.exitCode = 1;
}
