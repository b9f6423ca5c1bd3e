// The account mails: plain text and HTML with the same words.
import { escapeHtml } from '../../lib/html.ts';
import type { MailMessage } from './mail.service.ts';

function compose(
  template: string,
  to: string,
  subject: string,
  paragraphs: string[],
  action?: { label: string; url: string },
): MailMessage {
  const text = [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : []), '— Daybook'].join('\n\n');
  const button = action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(action.url)}" style="background:#4338ca;color:#fff;padding:12px 20px;border-radius:8px;text-decoration:none;font-weight:600">${escapeHtml(action.label)}</a></p><p style="color:#5b6172;font-size:13px">Or paste this link into your browser: ${escapeHtml(action.url)}</p>`
    : '';
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1c2130;line-height:1.55;max-width:560px;margin:0 auto;padding:24px">${paragraphs
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join('')}${button}<p style="color:#5b6172">— Daybook</p></body></html>`;
  return { template, to, subject, text, html };
}

export const mails = {
  verifyEmail: (to: string, url: string) =>
    compose(
      'verifyEmail',
      to,
      'Confirm your email address for Daybook',
      [
        'Hello,',
        `Please confirm that ${to} is your email address, so you can sign in to Daybook.`,
        'The link works for 3 days. If you did not sign up, you can ignore this message.',
      ],
      { label: 'Confirm email address', url },
    ),

  accountAlreadyExists: (to: string, loginUrl: string, resetUrl: string) =>
    compose('accountAlreadyExists', to, 'You already have a Daybook account', [
      'Hello,',
      `Someone (hopefully you) tried to sign up for Daybook with ${to}, but an account with this address already exists.`,
      `If it was you, sign in at ${loginUrl}, or reset your password at ${resetUrl}. If not, you can ignore this message.`,
    ]),

  passwordReset: (to: string, url: string) =>
    compose(
      'passwordReset',
      to,
      'Reset your Daybook password',
      [
        'Hello,',
        'You asked to reset your Daybook password. Choose a new one with the link below.',
        'The link works once, for 3 days. If you did not ask for this, you can ignore this message: your password stays the same.',
      ],
      { label: 'Choose a new password', url },
    ),

  unknownAccount: (to: string, signupInfoUrl: string) =>
    compose('unknownAccount', to, 'Password reset request for Daybook', [
      'Hello,',
      `Someone asked to reset the Daybook password for ${to}, but there is no account with this address.`,
      `If you expected one, you may have signed up with another address. Daybook is invite-only: ${signupInfoUrl}`,
    ]),

  passwordChanged: (to: string) =>
    compose('passwordChanged', to, 'Your Daybook password was changed', [
      'Hello,',
      'The password of your Daybook account was just changed. Other devices were signed out.',
      'If you did not do this, reset your password right away and contact the person who runs your Daybook.',
    ]),

  invite: (to: string, url: string, { from, expiresInDays }: { from: string; expiresInDays: number | null }) =>
    compose(
      'invite',
      to,
      'You are invited to Daybook',
      [
        'Hello,',
        `${from} invited you to Daybook, a personal assistant that learns about you through conversation and sends you a daily message.`,
        `Create your account with the link below, using this address (${to}). ${expiresInDays ? `The link works for ${expiresInDays} day${expiresInDays === 1 ? '' : 's'}.` : 'The link does not expire.'} If you were not expecting this, you can ignore this message.`,
      ],
      { label: 'Create your account', url },
    ),

  passwordWasReset: (to: string) =>
    compose('passwordWasReset', to, 'Your Daybook password was reset', [
      'Hello,',
      'The password of your Daybook account was just reset with a link sent to this address. Every device was signed out.',
      'If you did not do this, reset your password again right away.',
    ]),
};
