// Client-side checks of the account forms, with the spec's exact messages. The email and signup
// rules come from the contracts the server validates with.
import { PASSWORD_MIN_LENGTH, ZPasswordResetRequest, ZSignupRequest } from '@daybook/contracts';
import type { FormErrors } from '../../components/form.tsx';

export const MESSAGES = {
  passwordRequired: 'Password is required',
  passwordTooShort: `Password must be at least ${PASSWORD_MIN_LENGTH} characters`,
  confirmRequired: 'Please confirm your password',
  passwordsDiffer: 'Passwords do not match',
  currentRequired: 'Current password is required',
  newRequired: 'New password is required',
  newConfirmRequired: 'Please confirm your new password',
  newPasswordsDiffer: 'New passwords do not match',
} as const;

/** "Email is required" / "Invalid email address" */
export function emailError(value: string): string | undefined {
  const result = ZPasswordResetRequest.shape.email.safeParse(value);
  return result.success ? undefined : result.error.issues[0]?.message;
}

export function passwordError(value: string): string | undefined {
  if (!value) return MESSAGES.passwordRequired;
  if (value.length < PASSWORD_MIN_LENGTH) return MESSAGES.passwordTooShort;
  return undefined;
}

function compact<K extends string>(errors: Record<K, string | undefined>): FormErrors<K> {
  const out: FormErrors<K> = {};
  for (const key of Object.keys(errors) as K[]) {
    if (errors[key]) out[key] = errors[key];
  }
  return out;
}

export function validateEmailForm(values: { email: string }): FormErrors<'email'> {
  return compact({ email: emailError(values.email) });
}

export function validateLogin(values: { email: string; password: string }): FormErrors<'email' | 'password'> {
  return compact({ email: emailError(values.email), password: passwordError(values.password) });
}

export type SignupField = 'inviteToken' | 'email' | 'password1' | 'password2';

export function validateSignup(values: Record<SignupField, string>): FormErrors<SignupField> {
  const errors: FormErrors<SignupField> = {};
  const result = ZSignupRequest.safeParse(values);
  for (const issue of result.success ? [] : result.error.issues) {
    const key = issue.path[0] as SignupField;
    errors[key] ??= issue.message;
  }
  errors.password1 ??= passwordError(values.password1);
  if (!errors.password2 && values.password2 !== values.password1) errors.password2 = MESSAGES.passwordsDiffer;
  return compact(errors as Record<SignupField, string | undefined>);
}

export function validateNewPassword(values: { password: string; confirm: string }): FormErrors<'password' | 'confirm'> {
  return compact({
    password: passwordError(values.password),
    confirm: !values.confirm
      ? MESSAGES.confirmRequired
      : values.confirm !== values.password
        ? MESSAGES.passwordsDiffer
        : undefined,
  });
}

export function validateChangePassword(
  values: { current: string; next: string; confirm: string },
  { needsCurrent = true } = {},
): FormErrors<'current' | 'next' | 'confirm'> {
  return compact({
    current: needsCurrent && !values.current ? MESSAGES.currentRequired : undefined,
    next: !values.next
      ? MESSAGES.newRequired
      : values.next.length < PASSWORD_MIN_LENGTH
        ? MESSAGES.passwordTooShort
        : undefined,
    confirm: !values.confirm
      ? MESSAGES.newConfirmRequired
      : values.confirm !== values.next
        ? MESSAGES.newPasswordsDiffer
        : undefined,
  });
}

export const PASSWORD_HINT = `At least ${PASSWORD_MIN_LENGTH} characters. Avoid common words, all-number passwords and anything close to your email address.`;
