import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseMime } from '../../../../../tests/helpers/mime.ts';
import { startSmtp } from '../../../../../tests/helpers/smtp.ts';
import { createMailer } from './mail.service.ts';
import { mails } from './templates.ts';

describe('mailer', () => {
  it('sends plain text and HTML over SMTP from the configured sender', async () => {
    const smtp = await startSmtp();
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Daybook <hello@daybook.test>',
      outboxDir: '/nonexistent',
      log: pino({ level: 'silent' }),
    });
    try {
      await mailer.send(mails.verifyEmail('sam@example.com', 'https://daybook.test/auth/verify-email/abc-def-123'));
      const mail = await smtp.waitFor('sam@example.com');
      expect(mail.from).toBe('Daybook <hello@daybook.test>');
      expect(mail.subject).toBe('Confirm your email address for Daybook');
      expect(mail.links).toEqual(['https://daybook.test/auth/verify-email/abc-def-123']);
      expect(mail.html).toContain('href="https://daybook.test/auth/verify-email/abc-def-123"');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('without SMTP_URL, writes each message to the outbox folder and logs its links', async () => {
    const outboxDir = await mkdtemp(path.join(tmpdir(), 'daybook-outbox-'));
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const mailer = createMailer({ from: 'Daybook <daybook@localhost>', outboxDir, log });
    await mailer.send(mails.passwordReset('ana@example.com', 'http://localhost:3000/auth/reset-password/k-1-x'));
    const [file] = await readdir(outboxDir);
    const parsed = parseMime(await readFile(path.join(outboxDir, file ?? ''), 'utf8'));
    expect(parsed.subject).toBe('Reset your Daybook password');
    expect(parsed.text).toContain('http://localhost:3000/auth/reset-password/k-1-x');
    expect(lines.join('')).toContain(
      '"Reset your Daybook password\\" to ana@example.com http://localhost:3000/auth/reset-password/k-1-x',
    );
  });
});
