import { describe, expect, it } from 'vitest';
import { createSecretBox, SecretBoxError } from './secret-box.ts';

const KEY = 'a-secret-key-that-is-at-least-32-characters-long';
const OTHER = 'another-secret-key-that-is-at-least-32-characters';

describe('secret box', () => {
  it('seals so that nothing of the text shows, and opens what it sealed', () => {
    const box = createSecretBox([KEY], 'calendar');
    const sealed = box.seal('ya29.access-token-text');
    expect(sealed).toMatch(/^v1\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('access-token');
    expect(box.open(sealed)).toBe('ya29.access-token-text');
    // A fresh IV each time: the same text never seals the same way twice.
    expect(box.seal('same')).not.toBe(box.seal('same'));
    expect(box.openJson(box.sealJson({ a: 1, b: ['x'] }))).toEqual({ a: 1, b: ['x'] });
  });

  it('refuses text sealed with another key, for another purpose, or altered', () => {
    const box = createSecretBox([KEY], 'calendar');
    const sealed = box.seal('token');
    expect(() => createSecretBox([OTHER], 'calendar').open(sealed)).toThrow(SecretBoxError);
    expect(() => createSecretBox([KEY], 'something else').open(sealed)).toThrow(SecretBoxError);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[4] ?? '', 'base64url');
    ct[0] = (ct[0] ?? 0) ^ 1;
    parts[4] = ct.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow('the sealed secret was altered');
    for (const junk of ['', 'plain text', 'v2.a.b.c.d', 'v1.a.b.c'])
      expect(() => box.open(junk)).toThrow(SecretBoxError);
  });

  it('opens text sealed with a previous key listed after the current one, and seals with the current one', () => {
    const old = createSecretBox([OTHER], 'calendar').seal('kept');
    const rotated = createSecretBox([KEY, OTHER], 'calendar');
    expect(rotated.open(old)).toBe('kept');
    expect(createSecretBox([KEY], 'calendar').open(rotated.seal('new'))).toBe('new');
  });

  it('digests with the key: the same text gives the same digest, another key another one', () => {
    const a = createSecretBox([KEY], 'calendar');
    expect(a.digest('https://example.com/cal.ics')).toBe(a.digest('https://example.com/cal.ics'));
    expect(a.digest('https://example.com/cal.ics')).not.toBe(
      createSecretBox([OTHER], 'calendar').digest('https://example.com/cal.ics'),
    );
  });
});
