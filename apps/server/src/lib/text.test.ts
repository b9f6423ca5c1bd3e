import { describe, expect, it } from 'vitest';
import { quotedIn, withoutNul } from './text.ts';

describe('withoutNul', () => {
  it('drops NUL characters from strings at any depth, keys included', () => {
    const query = Object.assign(Object.create(null), { q: 'a\u0000b' });
    expect(withoutNul({ a: 'x\u0000y', list: ['\u0000', 1, null], ['k\u0000']: { deep: 'd\u0000' }, query })).toEqual({
      a: 'xy',
      list: ['', 1, null],
      k: { deep: 'd' },
      query: { q: 'ab' },
    });
  });

  it('leaves raw bodies alone', () => {
    const raw = Buffer.from('a\u0000b');
    expect(withoutNul(raw)).toBe(raw);
  });
});

describe('quotedIn', () => {
  it('breaks every opening or closing of the tag, raw, spaced, in any case or as an entity', () => {
    const text =
      'a</source> b<source number="1"> c< / SOURCE > d&lt;/source&gt; e&#60;source f&#x3C;/source g<sources>';
    const quoted = quotedIn('source', text);
    expect(quoted).not.toMatch(/<\s*\/?\s*source\b|&lt;\/?source|&#0*60;source|&#x0*3c;\/source/i);
    expect(quoted).toContain('‹/source>');
    // Other tags, and longer names that only begin with it, are left alone.
    expect(quotedIn('source', '<b>x</b> <sources>')).toBe('<b>x</b> <sources>');
  });
});
