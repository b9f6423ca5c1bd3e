import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseMime } from '../../../../../tests/helpers/mime.ts';
import { startSmtp } from '../../../../../tests/helpers/smtp.ts';
import { createMailer, createMailQueue } from './mail.service.ts';
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

  it('passes extra headers through to the SMTP server, and never the template name', async () => {
    const smtp = await startSmtp();
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Daybook <hello@daybook.test>',
      outboxDir: '/nonexistent',
      log: pino({ level: 'silent' }),
    });
    try {
      const pause = 'https://daybook.test/api/daily-messages/pause/?token=u7.1764000000.AbCdEf_-123';
      await mailer.send({
        ...mails.passwordChanged('kim@example.com'),
        headers: { 'List-Unsubscribe': `<${pause}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
      expect(smtp.messages).toHaveLength(1);
      const mail = smtp.messages[0];
      expect(mail?.headers['list-unsubscribe']).toBe(`<${pause}>`);
      expect(mail?.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(Object.values(mail?.headers ?? {}).join('\n')).not.toContain('passwordChanged');
      expect(mail?.subject).toBe('Your Daybook password was changed');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('logs a sent mail by template and message id, never by recipient', async () => {
    const smtp = await startSmtp();
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Daybook <hello@daybook.test>',
      outboxDir: '/nonexistent',
      log,
    });
    try {
      await mailer.send(mails.passwordReset('ana@example.com', 'https://daybook.test/auth/reset-password/k-1-x'));
      await smtp.waitFor('ana@example.com');
      const logged = lines.join('');
      expect(logged).toContain('"template":"passwordReset"');
      expect(logged).toMatch(/"messageId":"<[^"]+>"/);
      expect(logged).not.toContain('ana@example.com');
      expect(logged).not.toContain('k-1-x');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('without SMTP_URL, writes each message to a private outbox and logs only its file name', async () => {
    const outboxDir = path.join(await mkdtemp(path.join(tmpdir(), 'daybook-outbox-')), 'mail');
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const mailer = createMailer({ from: 'Daybook <daybook@localhost>', outboxDir, log });
    await mailer.send(mails.passwordReset('ana@example.com', 'http://localhost:3000/auth/reset-password/k-1-x'));
    const [file] = await readdir(outboxDir);
    const full = path.join(outboxDir, file ?? '');
    const parsed = parseMime(await readFile(full, 'utf8'));
    expect(parsed.subject).toBe('Reset your Daybook password');
    expect(parsed.text).toContain('http://localhost:3000/auth/reset-password/k-1-x');
    expect((await stat(outboxDir)).mode & 0o777).toBe(0o700);
    expect((await stat(full)).mode & 0o777).toBe(0o600);
    const logged = lines.join('');
    expect(logged).toContain(`mail waits in the outbox: ${file}`);
    expect(logged).not.toContain('ana@example.com');
    expect(logged).not.toContain('k-1-x');
    expect(logged).not.toContain('Reset your Daybook password');
  });

  it('several processes writing to one outbox at the same moment never overwrite each other', async () => {
    const outboxDir = path.join(await mkdtemp(path.join(tmpdir(), 'daybook-outbox-')), 'mail');
    const log = pino({ level: 'silent' });
    // Each process counts from one: same counter, same millisecond.
    const mailers = Array.from({ length: 4 }, () => createMailer({ from: 'Daybook <d@localhost>', outboxDir, log }));
    await Promise.all(
      mailers.map((m, i) => m.send(mails.passwordReset(`p${i}@example.com`, `http://localhost/r/k-${i}`))),
    );
    expect(await readdir(outboxDir)).toHaveLength(4);
  });

  it('in production without SMTP_URL, warns at start that account mail is not delivered', () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    createMailer({ from: 'Daybook <daybook@localhost>', outboxDir: '/data/mail', log, production: true });
    const [line] = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(line?.level).toBe(40);
    expect(line?.msg).toMatch(/SMTP_URL is not set: account mail .* is NOT delivered/);
  });
});

describe('mail queue', () => {
  const message = mails.passwordChanged('lee@example.com');

  it('returns at once, sends in the background, and drain waits for what is in flight', async () => {
    let finish = () => {};
    const sent: string[] = [];
    const mailer = {
      send: (m: typeof message) =>
        new Promise<void>((resolve) => {
          finish = () => {
            sent.push(m.to);
            resolve();
          };
        }),
      close() {},
    };
    const queue = createMailQueue(mailer, pino({ level: 'silent' }));
    queue.send(message);
    expect(sent).toEqual([]);
    const drained = queue.drain(5_000);
    finish();
    expect(await drained).toBe(0);
    expect(sent).toEqual(['lee@example.com']);
  });

  it('logs a failure without the recipient, and never throws to the caller', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const mailer = {
      send: async () => {
        throw Object.assign(new Error("Can't send mail - all recipients were rejected: 550 <lee@example.com>"), {
          code: 'EENVELOPE',
          responseCode: 550,
        });
      },
      close() {},
    };
    const queue = createMailQueue(mailer, log);
    queue.send(message);
    expect(await queue.drain(5_000)).toBe(0);
    const logged = lines.join('');
    expect(logged).toContain('could not send mail: passwordChanged');
    expect(logged).toContain('"code":"EENVELOPE"');
    expect(logged).not.toContain('lee@example.com');
  });
});
