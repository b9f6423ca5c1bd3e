// The registry mirror these machines use serves only some platform builds of native tools, so
// `npm install` here writes a lockfile without the others and `npm ci` then refuses it. This adds
// an entry (version, os, cpu, libc; no integrity, so npm fetches it where it is needed) for every
// optional platform package the lockfile names but lacks. Run it after regenerating the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const PLATFORM =
  /-(android|darwin|linux|win32|freebsd|openbsd|sunos|aix)-(x64|arm64|arm|ia32|riscv64|ppc64|s390x|loong64)(-(musl|gnu|msvc))?$/;
let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  if (!key.startsWith('node_modules/') || !entry.optionalDependencies) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies)) {
    const match = PLATFORM.exec(name);
    if (!match || packages[`node_modules/${name}`] || packages[`${key}/node_modules/${name}`]) continue;
    const [, os, cpu, , abi] = match;
    const libc = os === 'linux' ? [abi === 'musl' ? 'musl' : 'glibc'] : undefined;
    packages[`node_modules/${name}`] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc } : {}),
      optional: true,
      os: [os],
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lockfile: added ${added} platform package entries`);
