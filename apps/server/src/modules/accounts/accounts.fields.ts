// Reading and checking the fields of account forms, in allauth's error terms.
import { AccountError, fieldError, MESSAGES, required } from './account-error.ts';
import { passwordProblems } from './passwords.ts';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Reads an email field the way Django's EmailField does: required, trimmed, lower-cased, valid. */
export function cleanEmail(value: unknown, param = 'email'): string {
  if (typeof value !== 'string' || !value.trim()) throw new AccountError(400, [required(param)]);
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email)) throw fieldError(param, 'invalid', MESSAGES.invalidEmail);
  return email;
}

export function cleanPassword(value: unknown, param: string): string {
  if (typeof value !== 'string' || value === '') throw new AccountError(400, [required(param)]);
  return value;
}

export function validateNewPassword(password: string, param: string, email?: string) {
  const problems = passwordProblems(password, email);
  if (problems.length)
    throw new AccountError(
      400,
      problems.map((p) => ({ ...p, param })),
    );
}
