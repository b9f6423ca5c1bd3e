import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Markdown, parseMarkdown, safeHref } from './Markdown.tsx';

const md = (text: string) => render(<Markdown text={text} />).container.firstElementChild as HTMLElement;

describe('Markdown', () => {
  it('renders paragraphs, line breaks, bold, italic and inline code', () => {
    const root = md('Hello **bold** and *italic* and _also_ and `x < y`.\nNext line\n\nSecond ***both*** ~~old~~');
    const paragraphs = root.querySelectorAll('p');
    expect(paragraphs).toHaveLength(2);
    expect(root.querySelector('strong')).toHaveTextContent('bold');
    expect(Array.from(root.querySelectorAll('em')).map((e) => e.textContent)).toEqual(['italic', 'also', 'both']);
    expect(root.querySelector('code')).toHaveTextContent('x < y');
    expect(paragraphs[0]?.querySelector('br')).not.toBeNull();
    expect(root.querySelector('del')).toHaveTextContent('old');
  });

  it('breaks lines where a daily message does, as its email does (see daily.email.test.ts)', () => {
    const root = md(
      'Weather in Lisbon\nLight rain, 14 °C\n**Take** an umbrella\n\nSecond paragraph\n```\nkept\nas is\n```',
    );
    const first = root.querySelector('p');
    expect(first?.innerHTML).toMatch(
      /^Weather in Lisbon<br>\s*Light rain, 14 °C<br>\s*<strong>Take<\/strong> an umbrella$/,
    );
    expect(root.querySelector('pre')?.textContent).toContain('kept\nas is');
    expect(root.querySelector('pre br')).toBeNull();
  });

  it('leaves snake_case, lone asterisks and escaped markers alone', () => {
    const root = md('my_var_name and 2 * 3 * 4 and \\*not italic\\*');
    expect(root.querySelector('em')).toBeNull();
    expect(root).toHaveTextContent('my_var_name and 2 * 3 * 4 and *not italic*');
  });

  it('renders headings, lists, nested lists, blockquotes, rules and fenced code', () => {
    const root = md(
      [
        '# Title',
        '## Sub',
        '### Small',
        '',
        '- one',
        '- two',
        '  - nested',
        '',
        '3. third',
        '4. fourth',
        '',
        '> quoted **text**',
        '',
        '---',
        '',
        '```ts',
        'const a = "<b>";',
        '',
        '**not bold**',
        '```',
      ].join('\n'),
    );
    expect(screen.getByRole('heading', { level: 1, name: 'Title' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { level: 2, name: 'Sub' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { level: 3, name: 'Small' })).toBeInTheDocument();
    const ul = root.querySelector(':scope > ul') as HTMLElement;
    expect(ul.children).toHaveLength(2);
    expect(ul.querySelector('li ul li')).toHaveTextContent('nested');
    const ol = root.querySelector('ol') as HTMLOListElement;
    expect(ol).toHaveAttribute('start', '3');
    expect(ol.children).toHaveLength(2);
    expect(root.querySelector('blockquote strong')).toHaveTextContent('text');
    expect(root.querySelector('hr')).not.toBeNull();
    const code = root.querySelector('pre code') as HTMLElement;
    expect(code).toHaveClass('language-ts');
    expect(code.textContent).toBe('const a = "<b>";\n\n**not bold**');
    expect(code.querySelector('strong')).toBeNull();
  });

  it('renders a heading offset for use inside a page', () => {
    render(<Markdown text="# Inside" headingOffset={2} />);
    expect(screen.getByRole('heading', { level: 3, name: 'Inside' })).toBeInTheDocument();
  });

  it('renders tables', () => {
    const root = md('| Day | Rain |\n|:--|--:|\n| Mon | 20% |');
    expect(screen.getByRole('columnheader', { name: 'Day' })).toBeInTheDocument();
    expect(screen.getByRole('cell', { name: '20%' })).toHaveStyle({ textAlign: 'right' });
    expect(root.querySelectorAll('tbody tr')).toHaveLength(1);
  });

  it('escapes raw HTML instead of rendering it', () => {
    const root = md('<script>alert(1)</script> <img src=x onerror="alert(2)"> <b>hi</b>');
    expect(root.querySelector('script')).toBeNull();
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('b')).toBeNull();
    expect(root).toHaveTextContent('<script>alert(1)</script> <img src=x onerror="alert(2)"> <b>hi</b>');
  });

  it('links http(s) URLs, autolinks and bare URLs; external ones open in a new tab', () => {
    md(
      'See [the docs](https://docs.example.com/a_b "Docs"), <https://auto.example/x> and https://bare.example/path. Also [home](/memories).',
    );
    const docs = screen.getByRole('link', { name: 'the docs' });
    expect(docs).toHaveAttribute('href', 'https://docs.example.com/a_b');
    expect(docs).toHaveAttribute('target', '_blank');
    expect(docs).toHaveAttribute('rel', 'noopener noreferrer');
    expect(screen.getByRole('link', { name: 'https://auto.example/x' })).toHaveAttribute('target', '_blank');
    expect(screen.getByRole('link', { name: 'https://bare.example/path' })).toHaveAttribute(
      'href',
      'https://bare.example/path',
    );
    const home = screen.getByRole('link', { name: 'home' });
    expect(home).toHaveAttribute('href', '/memories');
    expect(home).not.toHaveAttribute('target');
  });

  it.each([
    ['[click](javascript:alert(1))'],
    ['[click](JavaScript:alert(1))'],
    ['[click]( java\tscript:alert(1))'],
    ['[click](data:text/html;base64,PHNjcmlwdD4=)'],
    ['[click](vbscript:msgbox(1))'],
  ])('does not render %s as a link', (text) => {
    const root = md(text);
    expect(screen.queryByRole('link')).not.toBeInTheDocument();
    expect(root).toHaveTextContent('click');
  });

  it('shows images as links rather than loading them', () => {
    const root = md('![a chart](https://img.example/c.png)');
    expect(root.querySelector('img')).toBeNull();
    expect(screen.getByRole('link', { name: 'a chart' })).toHaveAttribute('href', 'https://img.example/c.png');
  });

  it('safeHref allows web, mail, phone and relative links only', () => {
    expect(safeHref('https://a.example')).toBe('https://a.example');
    expect(safeHref('mailto:a@b.c')).toBe('mailto:a@b.c');
    expect(safeHref('/chat?x=1')).toBe('/chat?x=1');
    expect(safeHref('javascript:void(0)')).toBeNull();
    expect(safeHref('  data:text/html,x')).toBeNull();
    expect(safeHref('vbscript:x')).toBeNull();
    expect(safeHref('file:///etc/passwd')).toBeNull();
  });

  it('renders an unfinished fence while a reply streams', () => {
    const root = md('Here:\n```\nline one');
    expect(root.querySelector('pre code')).toHaveTextContent('line one');
  });

  it('links [n] citations to the n-th source, web pages only, when given sources', () => {
    const sources = [
      { url: 'https://one.example/a', title: 'One' },
      { url: 'javascript:alert(1)', title: 'Bad' },
      { url: '/local/path', title: 'Local' },
      { url: 'http://four.example/', title: '' },
    ];
    const root = render(
      <Markdown
        text={'Prices fell [1]. Not safe [2], not a page [3], missing [9].\n\n- Both [1, 4] and **bold [4]** and `[1]`'}
        citations={sources}
      />,
    ).container;
    const one = screen.getAllByRole('link', { name: '[1]' });
    expect(one).toHaveLength(1);
    expect(one[0]).toHaveAttribute('href', 'https://one.example/a');
    expect(one[0]).toHaveAttribute('target', '_blank');
    expect(one[0]).toHaveAttribute('rel', 'noopener noreferrer');
    expect(one[0]).toHaveAttribute('title', 'One');
    expect(screen.queryByRole('link', { name: '[2]' })).not.toBeInTheDocument();
    expect(screen.queryByRole('link', { name: '[3]' })).not.toBeInTheDocument();
    expect(root).toHaveTextContent('Not safe [2], not a page [3], missing [9].');
    const item = root.querySelector('li') as HTMLElement;
    expect(item).toHaveTextContent('Both [1, 4] and bold [4] and [1]');
    expect(Array.from(item.querySelectorAll('a')).map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['1', 'https://one.example/a'],
      ['4', 'http://four.example/'],
      ['[4]', 'http://four.example/'],
    ]);
    expect(item.querySelector('code')).toHaveTextContent('[1]');
  });

  it('links citations side by side, each to its own source', () => {
    const root = render(
      <Markdown
        text="Cheaper now [1][2]."
        citations={[{ url: 'https://a.example/' }, { url: 'https://b.example/' }]}
      />,
    ).container;
    expect(root).toHaveTextContent('Cheaper now [1][2].');
    expect(screen.getByRole('link', { name: '[1]' })).toHaveAttribute('href', 'https://a.example/');
    expect(screen.getByRole('link', { name: '[2]' })).toHaveAttribute('href', 'https://b.example/');
  });

  it('leaves [n] as text without sources, and [text](url) is still a link', () => {
    const root = md('See [1] and [2](https://two.example/).');
    expect(screen.getAllByRole('link')).toHaveLength(1);
    expect(screen.getByRole('link', { name: '2' })).toHaveAttribute('href', 'https://two.example/');
    expect(root).toHaveTextContent('See [1] and 2.');
  });
  it.each([
    ['[click](javascript&#58;alert(1))'],
    ['[click](&#106;avascript:alert(1))'],
    ['<javascript:alert(1)>'],
    ['[click][r]\n\n[r]: javascript:alert(1)'],
    ['[click](<javascript:alert(1)>)'],
    ['[click](file:///etc/passwd)'],
  ])('does not render %s as a link either', (text) => {
    const root = md(text);
    expect(screen.queryByRole('link')).not.toBeInTheDocument();
    expect(root.querySelector('[href]')).toBeNull();
  });

  it('never loads or links an unsafe image', () => {
    const root = md('![pic](javascript:alert(1)) ![](data:image/png;base64,AAAA)');
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('[href], [src]')).toBeNull();
  });

  it('keeps raw HTML as text in every place markdown allows it', () => {
    const root = md(
      '<div onclick="alert(1)">\n\n*x*\n\n</div>\n\n- <iframe src="https://evil.example"></iframe>\n\n| a |\n|---|\n| <svg onload=alert(1)> |\n\n[<b>label</b>](https://ok.example)',
    );
    for (const tag of ['div:not(.md-table)', 'iframe', 'svg', 'b']) expect(root.querySelector(tag)).toBeNull();
    expect(root.querySelector('[onclick], [onload]')).toBeNull();
    expect(root).toHaveTextContent('<iframe src="https://evil.example"></iframe>');
    expect(screen.getByRole('link', { name: '<b>label</b>' })).toHaveAttribute('href', 'https://ok.example');
  });

  it('links mail and phone in the same tab, and www. addresses over https', () => {
    md('[mail](mailto:a@b.example) [call](tel:+441234) and www.example.com/x.');
    expect(screen.getByRole('link', { name: 'mail' })).toHaveAttribute('href', 'mailto:a@b.example');
    expect(screen.getByRole('link', { name: 'mail' })).not.toHaveAttribute('target');
    expect(screen.getByRole('link', { name: 'call' })).toHaveAttribute('href', 'tel:+441234');
    const www = screen.getByRole('link', { name: 'www.example.com/x' });
    expect(www).toHaveAttribute('href', 'https://www.example.com/x');
    expect(www).toHaveAttribute('target', '_blank');
  });

  it('shows an image inside a link as its text, not a link in a link', () => {
    const root = md('[![logo](https://img.example/l.png)](https://site.example/)');
    expect(root.querySelectorAll('a')).toHaveLength(1);
    expect(root.querySelector('a a, img')).toBeNull();
    expect(screen.getByRole('link', { name: 'logo' })).toHaveAttribute('href', 'https://site.example/');
  });

  it('does not turn [n] inside a link label or code into a citation', () => {
    const root = render(
      <Markdown
        text={'[see [1]](https://x.example/) `[1]`\n\n```\n[1]\n```'}
        citations={[{ url: 'https://a.example/' }]}
      />,
    ).container;
    expect(root.querySelectorAll('a')).toHaveLength(1);
    expect(root.querySelector('a')).toHaveAttribute('href', 'https://x.example/');
  });

  it('renders task lists as read-only, named boxes', () => {
    const root = md('- [x] done\n- [ ] to do');
    const boxes = Array.from(root.querySelectorAll('input')) as HTMLInputElement[];
    expect(boxes.map((b) => [b.type, b.checked, b.disabled])).toEqual([
      ['checkbox', true, true],
      ['checkbox', false, true],
    ]);
    expect(screen.getByRole('checkbox', { name: 'Done' })).toBeInTheDocument();
  });

  it('gives each rendered text its own footnote ids', () => {
    const text = 'Claim[^1].\n\n[^1]: A note.';
    const root = render(
      <>
        <Markdown text={text} />
        <Markdown text={text} />
      </>,
    ).container;
    const ids = Array.from(root.querySelectorAll('[id]')).map((e) => e.id);
    expect(ids.length).toBeGreaterThan(2);
    expect(new Set(ids).size).toBe(ids.length);
    for (const ref of root.querySelectorAll('[aria-describedby]')) {
      expect(root.querySelector(`[id="${ref.getAttribute('aria-describedby')}"]`)).not.toBeNull();
    }
    for (const a of root.querySelectorAll('a[href^="#"]')) {
      expect(root.querySelector(`[id="${(a.getAttribute('href') as string).slice(1)}"]`)).not.toBeNull();
    }
  });

  it('keeps heading levels within h6 with an offset', () => {
    render(<Markdown text={'##### Five\n\n###### Six'} headingOffset={2} />);
    expect(screen.getAllByRole('heading', { level: 6 })).toHaveLength(2);
  });

  it('parseMarkdown gives the top-level heading levels, not those in code or quotes', () => {
    const blocks = parseMarkdown('Intro\n\n### A\n\n```\n# not\n```\n\n> # quoted\n\nB\n==\n');
    expect(blocks.flatMap((b) => (b.type === 'heading' ? [b.level] : []))).toEqual([3, 1]);
  });
});
