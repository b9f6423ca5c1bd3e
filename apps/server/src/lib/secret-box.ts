// Secrets kept at rest (calendar tokens, ICS addresses, PKCE verifiers): AES-256-GCM with a key
// derived from SECRET_KEY for this one purpose. Each ciphertext names the key it was sealed with,
// so a changed SECRET_KEY is recognised ("needs reconnecting") instead of decrypting to garbage.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** Format version 1: `v1.<key id>.<iv>.<tag>.<ciphertext>`, each part base64url. */
const FORMAT = 'v1';
const IV_BYTES = 12;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export interface SecretBox {
  seal(plain: string): string;
  /** Throws a SecretBoxError when the text was sealed with another key or was altered. */
  open(sealed: string): string;
  sealJson(value: unknown): string;
  openJson<T>(sealed: string): T;
  /** A keyed digest (hex): the same text gives the same digest, and nothing about the text shows. */
  digest(text: string): string;
}

interface Key {
  id: string;
  bytes: Buffer;
}

function deriveKey(secret: string, purpose: string): Key {
  const bytes = Buffer.from(hkdfSync('sha256', secret, 'daybook secret box', purpose, 32));
  // Names the key without revealing anything about it.
  const id = createHmac('sha256', bytes).update('key id').digest('base64url').slice(0, 8);
  return { id, bytes };
}

/**
 * `secrets[0]` seals; every entry opens (list an old SECRET_KEY after the current one to rotate).
 * `purpose` separates keys: tokens sealed for one purpose never open under another.
 */
export function createSecretBox(secrets: string[], purpose: string): SecretBox {
  if (!secrets.length) throw new Error('createSecretBox needs a secret');
  const keys = secrets.map((s) => deriveKey(s, purpose));
  const current = keys[0] as Key;
  const aad = Buffer.from(`${FORMAT}:${purpose}`);

  const box: SecretBox = {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.bytes, iv);
      cipher.setAAD(aad);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [FORMAT, current.id, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join(
        '.',
      );
    },
    open(sealed) {
      const parts = typeof sealed === 'string' ? sealed.split('.') : [];
      if (parts.length !== 5 || parts[0] !== FORMAT) throw new SecretBoxError('not a sealed secret');
      const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
      const key = keys.find((k) => k.id === id);
      if (!key) throw new SecretBoxError('sealed with another SECRET_KEY');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
        decipher.setAAD(aad);
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('the sealed secret was altered');
      }
    },
    sealJson: (value) => box.seal(JSON.stringify(value)),
    openJson: <T>(sealed: string) => JSON.parse(box.open(sealed)) as T,
    digest: (text) => createHmac('sha256', current.bytes).update(text).digest('hex'),
  };
  return box;
}
