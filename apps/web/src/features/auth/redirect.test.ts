import { describe, expect, it } from 'vitest';
import { rememberedPath, safePath } from './redirect.ts';

describe('rememberedPath', () => {
  it('prefers ?next=, then state.from, then /', () => {
    const from = { pathname: '/chat', search: '?dmid=4', hash: '' };
    expect(rememberedPath('?next=%2Fmemories', { from })).toBe('/memories');
    expect(rememberedPath('', { from })).toBe('/chat?dmid=4');
    expect(rememberedPath('', null)).toBe('/');
    expect(rememberedPath('?next=https%3A%2F%2Fevil.example', { from })).toBe('/chat?dmid=4');
  });

  it.each(['https://evil.example', '//evil.example', '/\\evil.example', '/\t/evil.example', 'memories', '', null])(
    'refuses %j as a target',
    (value) => {
      expect(safePath(value)).toBeNull();
    },
  );

  it('accepts same-site paths with query and hash', () => {
    expect(safePath('/resources?page=2#top')).toBe('/resources?page=2#top');
  });
});
