// Account failures in allauth's terms: an HTTP status and a list of {code, message, param?}.
// The allauth routes send them as they are; the product routes translate them to the /api shape.

export interface AccountErrorItem {
  code: string;
  message: string;
  param?: string;
}

export class AccountError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 409 | 429,
    readonly errors: AccountErrorItem[] = [],
  ) {
    super(errors[0]?.message ?? `account error ${status}`);
    this.name = 'AccountError';
  }
}

export const fieldError = (param: string, code: string, message: string) =>
  new AccountError(400, [{ code, message, param }]);
export const formError = (code: string, message: string) => new AccountError(400, [{ code, message }]);
export const required = (param: string): AccountErrorItem => ({
  code: 'required',
  message: 'This field is required.',
  param,
});

export const MESSAGES = {
  emailPasswordMismatch: 'The email address and/or password you specified are not correct.',
  tooManyLoginAttempts: 'Too many failed login attempts. Try again later.',
  invalidEmail: 'Enter a valid email address.',
  emailTaken: 'A user is already registered with this email address.',
  invalidOrExpiredKey: 'Invalid or expired key.',
  invalidPasswordReset: 'The password reset token was invalid.',
  // allauth's code and param, in plain words: its "Please type your current password." reads as if
  // the field were empty.
  enterCurrentPassword: 'Your current password is incorrect.',
  passwordMismatch: "The two password fields didn't match.",
  duplicateEmail: 'This email address is already associated with this account.',
  maxEmailAddresses: 'You cannot add more than 5 email addresses.',
  unknownEmail: 'Unknown email address.',
  unverifiedPrimary: 'Your primary email address must be verified.',
  cannotRemovePrimary: 'You cannot remove your primary email address.',
  incorrectPassword: 'Incorrect password.',
  accountNotFound: 'Unknown account.',
  unknownProvider: 'Unknown provider.',
} as const;
