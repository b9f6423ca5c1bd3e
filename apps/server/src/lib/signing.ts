// Signed, purpose-bound keys (email verification, password reset). Nothing is stored: the key
// carries its payload and an HMAC over it, the purpose, and facts that must not have changed.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { privateDir } from './private-files.ts';

export interface Signer {
  sign(purpose: string, parts: Array<string | number>, bound?: Array<string | number | null>): string;
  /** The payload parts when the signature is valid, else null. */
  unsign(
    purpose: string,
    key: string,
    partCount: number,
    bound?: (parts: string[]) => Promise<Array<string | number | null> | null>,
  ): Promise<string[] | null>;
}

export function createSigner(secret: string): Signer {
  const mac = (purpose: string, parts: Array<string | number>, bound: Array<string | number | null>) =>
    createHmac('sha256', secret)
      .update(JSON.stringify([purpose, parts.map(String), bound.map((b) => (b === null ? null : String(b)))]))
      .digest('hex')
      .slice(0, 40);

  return {
    sign(purpose, parts, bound = []) {
      return [...parts.map(String), mac(purpose, parts, bound)].join('-');
    },
    async unsign(purpose, key, partCount, bound) {
      if (typeof key !== 'string' || key.length > 200) return null;
      const pieces = key.split('-');
      if (pieces.length !== partCount + 1 || pieces.some((p) => !/^[0-9a-z]+$/.test(p))) return null;
      const parts = pieces.slice(0, partCount);
      const given = Buffer.from(pieces[partCount] ?? '');
      const facts = bound ? await bound(parts) : [];
      if (!facts) return null;
      const expected = Buffer.from(mac(purpose, parts, facts));
      return given.length === expected.length && timingSafeEqual(given, expected) ? parts : null;
    },
  };
}

/** SECRET_KEY, or a random key generated once and kept in the data directory. */
export async function loadSecretKey(
  configured: string | undefined,
  dataDir: string,
): Promise<{ key: string; generated: boolean }> {
  if (configured) return { key: configured, generated: false };
  const file = path.join(dataDir, 'secret_key');
  try {
    const key = (await readFile(file, 'utf8')).trim();
    if (key.length >= 32) return { key, generated: false };
  } catch {
    // Not there yet: create it below.
  }
  const key = randomBytes(48).toString('hex');
  await privateDir(dataDir);
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { key, generated: true };
}
