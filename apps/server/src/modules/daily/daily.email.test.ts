import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startSmtp } from '../../../../../tests/helpers/smtp.ts';
import { createMailer } from '../mail/mail.service.ts';
import { formatDeliveryDate, renderDailyEmail } from './daily.email.ts';

const urls = {
  publicUrl: 'https://daybook.test',
  messageUrl: 'https://daybook.test/resources/daily-message/5',
  chatUrl: 'https://daybook.test/chat?dmid=5',
  pauseUrl: 'https://daybook.test/api/daily-messages/pause/?token=u7.1764000000.AbCdEf_-123',
  settingsUrl: 'https://daybook.test/settings',
};

const render = (markdown: string, over: Partial<typeof urls> & { deliveryDate?: string } = {}) =>
  renderDailyEmail({ markdown, deliveryDate: '2026-11-24', ...urls, ...over });

/** The rendered message alone, between the header row and the buttons. */
const messagePart = (html: string) => {
  const start = html.indexOf('word-wrap:break-word;overflow-wrap:anywhere">');
  const end = html.indexOf('Open in Daybook');
  expect(start).toBeGreaterThan(0);
  return html.slice(start, end);
};

const attributeValues = (html: string, name: string) =>
  [...html.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'gi'))].map((m) => m[1] ?? '');

describe('renderDailyEmail: what web text cannot do', () => {
  const attacks = [
    '<script>alert(1)</script>',
    'Before <img src=x onerror=alert(2)> after',
    '<a href="javascript:alert(3)">raw anchor</a>',
    '<iframe src="https://evil.example/frame"></iframe><style>body{display:none}</style>',
    '<svg onload=alert(4)></svg>',
    '[plain js](javascript:alert(5))',
    '[mixed case](JaVaScRiPt:alert(6))',
    '[angle js](<javascript:alert(7)>)',
    '[tab js](java&#x09;script:alert(8))',
    '[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCg5KTwvc2NyaXB0Pg==)',
    '[vb link](vbscript:msgbox(10))',
    '![data image](data:image/png;base64,AAAA)',
    '[<img src=x onerror=alert(11)> html in text](https://ok.example/a)',
    '[**bold** words](https://ok.example/b)',
    '<javascript:alert(12)>',
    '"><b onmouseover=alert(13)>quoted</b>',
  ].join('\n\n');

  it('never lets scripts, handlers, frames, styles or images into the HTML', async () => {
    const { html } = await render(attacks);
    const message = messagePart(html);
    for (const bad of ['<script', '<img', '<iframe', '<style', '<svg', '<b ', 'onerror', 'onload', 'onmouseover'])
      expect(message.toLowerCase()).not.toContain(bad);
    expect(html.match(/<style/gi)).toBeNull();
    expect(html.match(/<script/gi)).toBeNull();
  });

  it('keeps only http(s), mailto and in-message links; the words of dropped links stay', async () => {
    const { html } = await render(attacks);
    const hrefs = attributeValues(html, 'href');
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href).toMatch(/^(https?:\/\/|mailto:|#)/);
    expect(attributeValues(html, 'src')).toEqual([]);
    const message = messagePart(html);
    for (const words of ['plain js', 'mixed case', 'angle js', 'tab js', 'data link', 'vb link', 'data image'])
      expect(message).toContain(words);
    // The autolink's text stays as text, never as a link.
    expect(message).toContain('javascript:alert(12)');
    expect(message).not.toMatch(/<a [^>]*>javascript:/);
    expect(message).toContain('href="https://ok.example/a"');
    expect(message).toContain('<strong>bold</strong> words</a>');
    expect(message).toContain('">quoted');
  });

  it('keeps unsafe addresses out of the plain-text part too', async () => {
    const { text } = await render(attacks);
    expect(text).not.toMatch(/\((?:javascript|data|vbscript):/i);
    expect(text).toContain('plain js\n');
    expect(text).toContain('html in text (https://ok.example/a)');
    expect(text).not.toContain('<script>');
    expect(text).not.toContain('onerror');
  });

  it('escapes text that looks like HTML, in the message and in the preview line', async () => {
    const { html } = await render('Tom & Jerry <3 "quotes" and </td></tr></table> x');
    expect(html).not.toContain('</td></tr></table> x');
    expect(html).toContain('Tom &#x26; Jerry &#x3C;3');
    // The hidden inbox preview holds the same words, escaped.
    expect(html).toContain('Tom &#38; Jerry &#60;3 &#34;quotes&#34;');
  });
});

describe('renderDailyEmail: markdown', () => {
  it('renders GFM tables, lists, task lists and strikethrough with inline styles', async () => {
    const { html } = await render(
      [
        '## Weather',
        '| City | Temp |\n| :--- | ---: |\n| Lisbon | 12 |',
        '- one\n- two\n  1. nested',
        '- [x] packed\n- [ ] leave',
        'It was ~~sunny~~ grey, `code` too.',
        '> quoted from the web',
        '```\npre <b>x</b>\n```',
        '---',
      ].join('\n\n'),
    );
    const message = messagePart(html);
    expect(message).toMatch(/<h2 style="[^"]*font-size:19px[^"]*margin-top:0">Weather<\/h2>/);
    expect(message).toMatch(/<table style="[^"]*border-collapse:collapse/);
    expect(message).toMatch(/<th align="left" style="[^"]*text-align:left">City<\/th>/);
    expect(message).toMatch(/<td align="right" style="[^"]*text-align:right">12<\/td>/);
    expect(message).toMatch(/<ul[^>]* style="[^"]*padding:0 0 0 24px/);
    expect(message).toMatch(/<ol style="[^"]*">\s*<li style="[^"]*">nested<\/li>/);
    expect(message).toContain('☑ packed');
    expect(message).toContain('☐ leave');
    expect(message).not.toContain('<input');
    expect(message).toContain('<del>sunny</del>');
    expect(message).toMatch(/<code style="[^"]*font-family:ui-monospace[^"]*">code<\/code>/);
    expect(message).toMatch(/<blockquote style="[^"]*border-left:4px solid/);
    expect(message).toContain('pre &#x3C;b>x&#x3C;/b>');
    expect(message).toMatch(/<hr style="[^"]*">/);
  });

  it('breaks lines where the message does, as the app shows it (a single newline is a <br>, not a space)', async () => {
    const { html, text } = await render(
      'Weather in Lisbon\nLight rain, 14 °C\n**Take** an umbrella\n\nSecond paragraph\n```\nkept\nas is\n```',
    );
    const message = messagePart(html);
    expect(message).toMatch(/Weather in Lisbon<br>\s*Light rain, 14 °C<br>\s*<strong[^>]*>Take<\/strong> an umbrella/);
    expect(message).not.toContain('Weather in Lisbon\nLight rain');
    // Code keeps its own newlines, without breaks.
    expect(message).toMatch(/kept\nas is/);
    expect(text).toContain('Weather in Lisbon\nLight rain, 14 °C\nTake an umbrella');
  });

  it('makes relative links absolute on publicUrl, keeping its path, and marks only outside links', async () => {
    const markdown =
      'See [your message](/resources/daily-message/5), [chat about it](/chat?dmid=5), [memories][m] and [a source](https://news.example/story).\n\n[m]: /memories';
    const { html, text } = await render(markdown);
    expect(html).toContain(
      '<a href="https://daybook.test/resources/daily-message/5" style="color:#4338ca;text-decoration:underline">your message</a>',
    );
    expect(html).toContain('href="https://daybook.test/chat?dmid=5"');
    expect(html).toContain('href="https://daybook.test/memories"');
    expect(html).toContain(
      '<a href="https://news.example/story" target="_blank" rel="noopener noreferrer" style="color:#4338ca;text-decoration:underline">a source</a>',
    );
    expect(text).toContain(
      'See your message (https://daybook.test/resources/daily-message/5), chat about it (https://daybook.test/chat?dmid=5), memories (https://daybook.test/memories) and a source (https://news.example/story).',
    );

    const underPath = await render('[chat](/chat?dmid=5)', { publicUrl: 'https://example.org/daybook/' });
    expect(underPath.html).toContain('href="https://example.org/daybook/chat?dmid=5"');
  });

  it('turns images into links, so opening the mail loads nothing from a third party', async () => {
    const { html, text } = await render('![Rain radar](https://maps.example/radar.png)');
    expect(html).not.toContain('<img');
    expect(html).toContain('href="https://maps.example/radar.png"');
    expect(html).toContain('>[Rain radar]</a>');
    expect(text).toContain('Rain radar (https://maps.example/radar.png)');

    const linked = await render('[![Radar](https://maps.example/r.png)](https://maps.example/live)');
    expect(linked.html).toContain('href="https://maps.example/live"');
    expect(linked.html).not.toContain('r.png');
    expect(linked.html).toMatch(/<a [^>]*>Radar<\/a>/);
  });
});

describe('renderDailyEmail: the mail around the message', () => {
  it('names the delivery date in the subject, whatever the time zone', async () => {
    expect((await render('Hi')).subject).toBe('Your daily message for Tuesday, 24 November');
    expect(formatDeliveryDate('2024-02-29')).toBe('Thursday, 29 February');
    expect(formatDeliveryDate('2027-01-01')).toBe('Friday, 1 January');
    expect(() => formatDeliveryDate('2026-02-30')).toThrow(/not a date/);
    expect(() => formatDeliveryDate('24.11.2026')).toThrow(/not a date/);
  });

  it('asks for one-click unsubscribe with the pause link (RFC 8058)', async () => {
    const { headers } = await render('Hi');
    expect(headers).toEqual({
      'List-Unsubscribe': `<${urls.pauseUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });

  it('links the app, the history, pausing and settings in both parts', async () => {
    const { html, text } = await render('Good morning.\n\nRead [the report](/resources/web-research/9).');
    expect(html).toMatch(/<a href="https:\/\/daybook\.test\/chat\?dmid=5" [^>]*>Open in Daybook<\/a>/);
    expect(html).toContain(`href="${urls.messageUrl}"`);
    expect(html).toContain('>View in your history</a>');
    expect(html).toContain('You get this because daily emails are on in your Daybook settings.');
    expect(html).toContain(`href="${urls.pauseUrl}"`);
    expect(html).toContain('>Pause daily messages</a>');
    expect(html).toContain(`href="${urls.settingsUrl}"`);
    expect(html).toContain('>Change delivery time or turn off email</a>');
    expect(html).not.toMatch(/<link|<style|url\(/i);

    expect(text).toContain('Good morning.\n\nRead the report (https://daybook.test/resources/web-research/9).');
    expect(text).toContain(`Open in Daybook: ${urls.chatUrl}`);
    expect(text).toContain(`View in your history: ${urls.messageUrl}`);
    expect(text).toContain('You get this because daily emails are on in your Daybook settings.');
    expect(text).toContain(`Pause daily messages: ${urls.pauseUrl}`);
    expect(text).toContain(`Change delivery time or turn off email: ${urls.settingsUrl}`);
  });

  it('reads as plain text: headings, lists, tables and autolinks', async () => {
    const { text } = await render(
      '# Today\n\n1. first\n2. second\n\n| a | bb |\n| - | - |\n| ccc | d |\n\nMail me@example.com or see www.example.com.',
    );
    expect(text).toContain('Today\n=====');
    expect(text).toContain('1. first\n2. second');
    expect(text).toContain('a   | bb\n----|---\nccc | d');
    expect(text).toContain('Mail me@example.com or see http://www.example.com/.');
  });

  it('refuses links that are not absolute http(s) addresses', async () => {
    await expect(render('Hi', { pauseUrl: '/pause' })).rejects.toThrow(/pauseUrl/);
    await expect(render('Hi', { chatUrl: 'javascript:alert(1)' })).rejects.toThrow(/chatUrl/);
  });
});

describe('the daily mail over SMTP', () => {
  it('arrives with a plain-text part, an HTML part and the one-click unsubscribe headers', async () => {
    const smtp = await startSmtp();
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Daybook <hello@daybook.test>',
      outboxDir: '/nonexistent',
      log: pino({ level: 'silent' }),
    });
    try {
      const mail = await render('## Good morning\n\nRain at 14:00. [Details](/chat?dmid=5) — ünïcödé ☂');
      await mailer.send({ template: 'dailyMessage', to: 'sam@example.com', ...mail });
      expect(smtp.messages).toHaveLength(1);
      const parsed = smtp.messages[0];
      if (!parsed) throw new Error('no mail');
      const headers = parsed.headers;
      expect(headers['list-unsubscribe']).toBe(`<${urls.pauseUrl}>`);
      expect(headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(headers['content-type']).toMatch(/^multipart\/alternative/);
      expect(parsed.subject).toBe('Your daily message for Tuesday, 24 November');
      expect(parsed.text).toContain('Rain at 14:00. Details (https://daybook.test/chat?dmid=5) — ünïcödé ☂');
      expect(parsed.text).toContain(`Pause daily messages: ${urls.pauseUrl}`);
      expect(parsed.html).toContain('<a href="https://daybook.test/chat?dmid=5"');
      expect(parsed.html).toContain('ünïcödé ☂');
      expect(parsed.html).toContain('>Pause daily messages</a>');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
