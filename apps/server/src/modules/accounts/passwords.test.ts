// Django's password validators, as passwordProblems applies them.
import { describe, expect, it } from 'vitest';
import { passwordProblems } from './passwords.ts';

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
