// Django's password validators, as passwordProblems applies them, and the argon2id hashes.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { argon2id, HASH_OPTIONS, hashPassword, passwordProblems, verifyPassword } from './passwords.ts';

const similar = (password: string, email: string) =>
  passwordProblems(password, email).some((p) => p.code === 'password_too_similar');

describe('UserAttributeSimilarityValidator on the email address (max_similarity 0.7)', () => {
  it('refuses a password close to the local part, though it does not contain it', () => {
    expect(similar('mariagonzalez1', 'maria.gonzalez@example.com')).toBe(true);
  });

  it('refuses a password close to one part of the address', () => {
    expect(similar('riveras99', 'sam.rivera@example.com')).toBe(true);
    expect(similar('Example!', 'sam@example.com')).toBe(true);
  });

  it('refuses a password close to the whole address', () => {
    expect(similar('sam@example.co', 'sam@example.com')).toBe(true);
  });

  it('accepts unrelated passwords', () => {
    expect(similar('correct horse battery', 'maria.gonzalez@example.com')).toBe(false);
    expect(similar('mornings are for coffee', 'sam.rivera@example.com')).toBe(false);
  });

  it("gives Django's code and message", () => {
    expect(passwordProblems('mariagonzalez1', 'maria.gonzalez@example.com')).toEqual([
      { code: 'password_too_similar', message: 'The password is too similar to the email address.' },
    ]);
  });
});

// Made by node-argon2 0.45.1 (the `argon2` package Daybook used until issue 30), as stored in
// users.password_hash: its defaults (m=65536, t=3, p=4; it writes p before t), and the lighter
// parameters other tools write (OWASP's m=19456, t=2, p=1).
const EXISTING = [
  {
    password: 'correct horse battery staple',
    hash: '$argon2id$v=19$m=65536,p=4,t=3$1EmftKQdaIFGdsjCe83e5A$mkAOhc2Hw01PXfUKtIXdX0l4ROoxAa6PE03cQWqzDt4',
  },
  {
    password: 'pässwörd 🔑 日本語 ñandú',
    hash: '$argon2id$v=19$m=65536,p=4,t=3$KZiRzitib8ixPe7Qmh4Xyg$uWGmZNfeSExaMrn8U1kTveuVy23YYzyG6jtz/2wFfQw',
  },
  {
    password: 'correct horse battery staple',
    hash: '$argon2id$v=19$m=19456,p=1,t=2$NAy7ndeMBk5RxVMpKjdZVA$J/bGTU7obFWYTFk8W8878Cp72/rfNejCe4hZjtIRUt8',
  },
];

/** A PHC string's algorithm, version and cost parameters (in any order). */
function parameters(hash: string) {
  const [, algorithm, version, params] = hash.split('$');
  return { algorithm, version, ...Object.fromEntries(params?.split(',').map((p) => p.split('=')) ?? []) };
}

describe('password hashes', () => {
  // The production cost, which the rest of the suite lowers (apps/server/src/test/setup.ts); put back
  // after, for the files that share this worker's modules.
  let suiteOptions = argon2id.options;
  beforeAll(() => {
    suiteOptions = argon2id.options;
    argon2id.options = HASH_OPTIONS;
  });
  afterAll(() => {
    argon2id.options = suiteOptions;
  });
  afterEach(() => vi.restoreAllMocks());

  it.each(EXISTING)(
    'accepts a hash made before the switch (%#), and only with its password',
    async ({ password, hash }) => {
      expect(await verifyPassword(hash, password)).toBe(true);
      expect(await verifyPassword(hash, `${password}!`)).toBe(false);
      expect(await verifyPassword(hash, password.normalize('NFD'))).toBe(password === password.normalize('NFD'));
    },
  );

  it('hashes new passwords with argon2id at least as strong as before (64 MiB, 3 passes, 4 lanes)', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(parameters(hash)).toEqual({ algorithm: 'argon2id', version: 'v=19', m: '65536', t: '3', p: '4' });
    // A 16-byte salt and a 32-byte digest, unpadded base64.
    expect(
      hash
        .split('$')
        .slice(4)
        .map((part) => part.length),
    ).toEqual([22, 43]);
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse battery stapler')).toBe(false);
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash);
  });

  it('refuses a missing or malformed hash without throwing', async () => {
    expect(await verifyPassword(null, 'not-a-real-password-0')).toBe(false);
    expect(await verifyPassword(undefined, 'anything')).toBe(false);
    expect(await verifyPassword('', 'anything')).toBe(false);
    expect(await verifyPassword('$argon2id$v=19$garbage', 'anything')).toBe(false);
    expect(await verifyPassword('pbkdf2_sha256$870000$salt$hash', 'anything')).toBe(false);
  });

  it('without a hash, checks the password against a dummy hash as costly as a real one', async () => {
    const verify = vi.spyOn(argon2id, 'verify');
    expect(await verifyPassword(null, 'correct horse battery staple')).toBe(false);
    expect(verify).toHaveBeenCalledTimes(1);
    const [dummy] = verify.mock.calls[0] ?? [''];
    expect(parameters(dummy)).toEqual(parameters(await hashPassword('correct horse battery staple')));
    expect(parameters(dummy)).toEqual(parameters(EXISTING[0]?.hash ?? ''));
  });
});
