import { describe, expect, it } from 'vitest';
import { withoutNul } from './text.ts';

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
