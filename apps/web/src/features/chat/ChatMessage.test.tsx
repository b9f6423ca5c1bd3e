// Folding long answers: what is measured as laid out, and what is known to be short without measuring.
import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CollapsibleMarkdown, surelyShort } from './ChatMessage.tsx';

const LINE_PX = 24;

/** A layout for jsdom: every answer body is `lines` lines tall, 24 px each. */
function layOut(lines: number) {
  vi.spyOn(HTMLElement.prototype, 'scrollHeight', 'get').mockReturnValue(lines * LINE_PX);
  const real = window.getComputedStyle.bind(window);
  return vi.spyOn(window, 'getComputedStyle').mockImplementation((element) => {
    const style = real(element);
    return new Proxy(style, {
      get: (target, key) => {
        if (key === 'lineHeight') return `${LINE_PX}px`;
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  });
}

afterEach(() => vi.restoreAllMocks());

describe('folding long answers', () => {
  it('never reads the layout of an answer that stays short on any screen', () => {
    const style = layOut(30);
    render(<CollapsibleMarkdown text={'Here are **three** ideas for this week:\n\n- one\n- two\n- three'} />);
    expect(style).not.toHaveBeenCalled();
    expect(screen.queryByRole('button', { name: 'Read more...' })).not.toBeInTheDocument();
  });

  it('measures an answer that a narrow screen may wrap past the fold, and folds it when it does', () => {
    // Ten lines that fit a wide bubble (under the fold by the estimate), but wrap to 30 on a phone.
    const text = Array.from({ length: 10 }, (_, i) => `Line ${i}: ${'a few words more '.repeat(4)}`).join('\n');
    const style = layOut(30);
    render(<CollapsibleMarkdown text={text} />);
    expect(style).toHaveBeenCalled();
    expect(screen.getByRole('button', { name: 'Read more...' })).toHaveAttribute('aria-expanded', 'false');
  });

  it('leaves a measured answer open when it fits', () => {
    const text = Array.from({ length: 10 }, (_, i) => `Line ${i}: ${'a few words more '.repeat(4)}`).join('\n');
    layOut(10);
    render(<CollapsibleMarkdown text={text} />);
    expect(screen.queryByRole('button', { name: 'Read more...' })).not.toBeInTheDocument();
  });

  it.each([
    ['a one-line question', true, 'What should I read this week?'],
    ['a short list', true, 'Three ideas:\n\n- one\n- two\n- three'],
    ['eight short lines', true, Array.from({ length: 8 }, () => 'a line').join('\n')],
    ['nine short lines', false, Array.from({ length: 9 }, () => 'a line').join('\n')],
    ['one paragraph of 200 characters', false, 'x'.repeat(200)],
  ])('knows without measuring whether %s is short: %s', (_what, short, text) => {
    expect(surelyShort(text)).toBe(short);
  });
});
