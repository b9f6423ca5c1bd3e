import { describe, expect, it } from 'vitest';
import { CHAT_TOO_LONG } from './chat.ts';
import { thousands } from './common.ts';

describe('thousands', () => {
  it.each([0, 7, 999, 1000, 8000, 12_345, 999_999, 1_000_000, 2_147_483_647, -8000])(
    'writes %i as toLocaleString("en-US") does',
    (n) => {
      expect(thousands(n)).toBe(n.toLocaleString('en-US'));
    },
  );

  it('writes the messages the server and the app show', () => {
    expect(CHAT_TOO_LONG).toBe('Messages can be at most 8,000 characters.');
  });
});
