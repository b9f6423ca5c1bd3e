// Retrying ("web-first") assertions for the end-to-end tests, shaped like Playwright's own:
//   await expectLocator(page.getByRole('status')).toHaveText('Saved.');
//   await expectPage(page).toHaveURL((u) => u.pathname === '/chat');
// playwright-core, which these tests use, ships no `expect`, and a one-shot read right after an
// action (`expect(await locator.textContent()).toBe(...)`) can catch the page before it updates.
// Each assertion here reads the page again until the condition holds or its time is up (10 s unless
// `timeout` says otherwise), then fails naming the locator, what was expected and what was last seen.
// Visibility, URLs and titles use playwright-core's own waiting (`locator.waitFor`, `page.waitForURL`,
// `page.waitForFunction`); the other reads wait for their element as playwright-core does and are
// repeated with Playwright's back-off. Texts are compared as they are (textContent, no whitespace
// folding), so an exact text stays exact.
import { fileURLToPath } from 'node:url';
import { errors, type Locator, type Page } from 'playwright-core';

/** How long an assertion keeps trying, unless told otherwise. */
export const DEFAULT_TIMEOUT = 10_000;
/** Pauses between two reads, as Playwright's expect uses them; the last one repeats. */
const BACKOFF_MS = [100, 250, 500, 1000];

export interface TimeoutOption {
  timeout?: number;
}
/** A text: exactly this string, or matching this expression. */
export type TextMatch = string | RegExp;
/** A URL: exactly this string, matching this expression, or passing this check. */
export type UrlMatch = string | RegExp | ((url: URL) => boolean);

const HERE = fileURLToPath(import.meta.url);

/** The caller's stack, taken when an assertion starts, so a failure points at the test's line. */
function callSite(): Error {
  return new Error('call site');
}

function failure(site: Error, message: string, cause?: unknown): Error {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  const frames = (site.stack ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => !line.includes(HERE));
  error.stack = `Error: ${message}\n${frames.join('\n')}`;
  return error;
}

const isTimeout = (error: unknown): error is Error =>
  error instanceof errors.TimeoutError || (error instanceof Error && error.name === 'TimeoutError');

const firstLine = (error: Error) => error.message.split('\n')[0] ?? '';

const show = (value: unknown): string => {
  if (value instanceof RegExp) return String(value);
  if (typeof value === 'function') return String(value);
  if (Array.isArray(value)) return `[${value.map(show).join(', ')}]`;
  return JSON.stringify(value);
};

const textMatches = (actual: string, expected: TextMatch) =>
  typeof expected === 'string' ? actual === expected : expected.test(actual);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Outcome<T> = { ok: true } | { ok: false; value?: T; error?: Error };

/**
 * Reads until `pass` holds or `timeout` ms have gone by. `read` gets the time left, for playwright-core
 * calls that wait for their element. Anything but a timeout (a strict-mode violation: the locator
 * matches several elements; a closed page) ends it at once.
 */
async function poll<T>(
  timeout: number,
  read: (timeLeft: number) => Promise<T>,
  pass: (value: T) => boolean,
): Promise<Outcome<T>> {
  const deadline = Date.now() + timeout;
  let last: Outcome<T> = { ok: false };
  for (let attempt = 0; ; attempt++) {
    try {
      // Never less than a quarter second: the last read still gets the time to find its element.
      const value = await read(Math.max(250, deadline - Date.now()));
      if (pass(value)) return { ok: true };
      last = { ok: false, value };
    } catch (error) {
      if (!isTimeout(error)) throw error;
      last = { ok: false, error };
    }
    const left = deadline - Date.now();
    if (left <= 0) return last;
    await sleep(Math.min(BACKOFF_MS[attempt] ?? (BACKOFF_MS.at(-1) as number), left));
  }
}

export class LocatorAssertions {
  constructor(private readonly locator: Locator) {}

  /**
   * The element's textContent is exactly `expected` (or matches it). `trim`: compared without the
   * whitespace around it (markup's line breaks). An array: the texts of all matching elements, in order.
   */
  toHaveText(expected: TextMatch | TextMatch[], options: TimeoutOption & { trim?: boolean } = {}): Promise<void> {
    const site = callSite();
    const tidy = (text: string | null) => (options.trim ? (text ?? '').trim() : (text ?? ''));
    if (Array.isArray(expected)) {
      return this.check(
        site,
        `toHaveText(${show(expected)})`,
        options,
        () => this.locator.allTextContents(),
        (texts) => texts.length === expected.length && texts.every((t, i) => textMatches(tidy(t), expected[i] ?? '')),
      );
    }
    return this.check(
      site,
      `toHaveText(${show(expected)}${options.trim ? ', { trim: true }' : ''})`,
      options,
      (timeout) => this.locator.textContent({ timeout }),
      (text) => textMatches(tidy(text), expected),
    );
  }

  /** The element's textContent contains `expected` (or matches it anywhere). */
  toContainText(expected: TextMatch, options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      `toContainText(${show(expected)})`,
      options,
      (timeout) => this.locator.textContent({ timeout }),
      (text) => (typeof expected === 'string' ? (text ?? '').includes(expected) : expected.test(text ?? '')),
    );
  }

  /** Exactly `count` elements match. */
  toHaveCount(count: number, options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      `toHaveCount(${count})`,
      options,
      () => this.locator.count(),
      (n) => n === count,
    );
  }

  /** The input's value is exactly `expected` (or matches it). */
  toHaveValue(expected: TextMatch, options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      `toHaveValue(${show(expected)})`,
      options,
      (timeout) => this.locator.inputValue({ timeout }),
      (value) => textMatches(value, expected),
    );
  }

  /** The attribute is there with exactly `expected` as its value (or one matching it). */
  toHaveAttribute(name: string, expected: TextMatch, options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      `toHaveAttribute(${show(name)}, ${show(expected)})`,
      options,
      (timeout) => this.locator.getAttribute(name, { timeout }),
      (value) => value !== null && textMatches(value, expected),
    );
  }

  /** The element is enabled (`enabled: false`: disabled). */
  toBeEnabled(options: TimeoutOption & { enabled?: boolean } = {}): Promise<void> {
    const enabled = options.enabled ?? true;
    return this.check(
      callSite(),
      enabled ? 'toBeEnabled()' : 'toBeEnabled({ enabled: false })',
      options,
      (timeout) => this.locator.isEnabled({ timeout }),
      (value) => value === enabled,
      (value) => (value ? 'enabled' : 'disabled'),
    );
  }

  /** The element is disabled. */
  toBeDisabled(options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      'toBeDisabled()',
      options,
      (timeout) => this.locator.isDisabled({ timeout }),
      (value) => value,
      (value) => (value ? 'disabled' : 'enabled'),
    );
  }

  /** The element can be edited (`editable: false`: it cannot). */
  toBeEditable(options: TimeoutOption & { editable?: boolean } = {}): Promise<void> {
    const editable = options.editable ?? true;
    return this.check(
      callSite(),
      editable ? 'toBeEditable()' : 'toBeEditable({ editable: false })',
      options,
      (timeout) => this.locator.isEditable({ timeout }),
      (value) => value === editable,
      (value) => (value ? 'editable' : 'not editable'),
    );
  }

  /** The element has focus. */
  toBeFocused(options: TimeoutOption = {}): Promise<void> {
    return this.check(
      callSite(),
      'toBeFocused()',
      options,
      (timeout) =>
        this.locator.evaluate(
          (el) => (el === document.activeElement ? '' : (document.activeElement?.outerHTML.slice(0, 120) ?? 'nothing')),
          undefined,
          { timeout },
        ),
      (focusedInstead) => focusedInstead === '',
      (focusedInstead) => `focus is on ${focusedInstead}`,
    );
  }

  /** The element is there and visible (playwright-core's `waitFor({ state: 'visible' })`). */
  toBeVisible(options: TimeoutOption = {}): Promise<void> {
    return this.waitForState(callSite(), 'visible', 'toBeVisible()', options);
  }

  /** The element is hidden or not there at all (playwright-core's `waitFor({ state: 'hidden' })`). */
  toBeHidden(options: TimeoutOption = {}): Promise<void> {
    return this.waitForState(callSite(), 'hidden', 'toBeHidden()', options);
  }

  private async waitForState(
    site: Error,
    state: 'visible' | 'hidden',
    what: string,
    { timeout = DEFAULT_TIMEOUT }: TimeoutOption,
  ): Promise<void> {
    try {
      await this.locator.waitFor({ state, timeout });
    } catch (error) {
      const prefix = `expect(${this.locator}).${what}`;
      if (!isTimeout(error)) throw failure(site, `${prefix} failed: ${(error as Error).message}`, error);
      throw failure(site, `${prefix} timed out after ${timeout} ms\n  received: ${await this.describeState()}`, error);
    }
  }

  /** How many elements match and whether the only one is visible, for a failure message. */
  private async describeState(): Promise<string> {
    try {
      const count = await this.locator.count();
      if (count === 0) return 'no element matches';
      if (count > 1) return `${count} elements match`;
      return (await this.locator.isVisible()) ? 'one element, visible' : 'one element, hidden';
    } catch (error) {
      return `unknown (${firstLine(error as Error)})`;
    }
  }

  private async check<T>(
    site: Error,
    what: string,
    { timeout = DEFAULT_TIMEOUT }: TimeoutOption,
    read: (timeLeft: number) => Promise<T>,
    pass: (value: T) => boolean,
    describe: (value: T) => string = show,
  ): Promise<void> {
    const prefix = `expect(${this.locator}).${what}`;
    let outcome: Outcome<T>;
    try {
      outcome = await poll(timeout, read, pass);
    } catch (error) {
      throw failure(site, `${prefix} failed: ${(error as Error).message}`, error);
    }
    if (outcome.ok) return;
    const received = outcome.error ? `no matching element (${firstLine(outcome.error)})` : describe(outcome.value as T);
    throw failure(site, `${prefix} timed out after ${timeout} ms\n  received: ${received}`, outcome.error);
  }
}

export class PageAssertions {
  constructor(private readonly page: Page) {}

  /**
   * The page's address is exactly `expected`, matches it, or passes the check (given a `URL`),
   * by playwright-core's `page.waitForURL` (waiting for nothing but the address).
   */
  async toHaveURL(expected: UrlMatch, { timeout = DEFAULT_TIMEOUT }: TimeoutOption = {}): Promise<void> {
    const site = callSite();
    const match = typeof expected === 'string' ? (url: URL) => url.href === expected : expected;
    try {
      await this.page.waitForURL(match, { timeout, waitUntil: 'commit' });
    } catch (error) {
      const prefix = `expect(page).toHaveURL(${show(expected)})`;
      if (!isTimeout(error)) throw failure(site, `${prefix} failed: ${(error as Error).message}`, error);
      throw failure(site, `${prefix} timed out after ${timeout} ms\n  received: ${this.page.url()}`, error);
    }
  }

  /** The document's title is exactly `expected` (or matches it), by playwright-core's `page.waitForFunction`. */
  async toHaveTitle(expected: TextMatch, { timeout = DEFAULT_TIMEOUT }: TimeoutOption = {}): Promise<void> {
    const site = callSite();
    const arg =
      typeof expected === 'string'
        ? { text: expected, source: null, flags: '' }
        : { text: null, source: expected.source, flags: expected.flags };
    try {
      await this.page.waitForFunction(
        ({ text, source, flags }) =>
          source === null ? document.title === text : new RegExp(source, flags).test(document.title),
        arg,
        { timeout },
      );
    } catch (error) {
      const prefix = `expect(page).toHaveTitle(${show(expected)})`;
      if (!isTimeout(error)) throw failure(site, `${prefix} failed: ${(error as Error).message}`, error);
      const title = await this.page.title().catch((e: Error) => `unknown (${firstLine(e)})`);
      throw failure(site, `${prefix} timed out after ${timeout} ms\n  received: ${show(title)}`, error);
    }
  }
}

/** Retrying assertions on what `locator` finds on the page. */
export function expectLocator(locator: Locator): LocatorAssertions {
  return new LocatorAssertions(locator);
}

/** Retrying assertions on the page itself: its address and title. */
export function expectPage(page: Page): PageAssertions {
  return new PageAssertions(page);
}

/**
 * Runs `block` (plain `expect` assertions on fresh reads) until it passes or `timeout` ms have gone
 * by, as Playwright's `expect(block).toPass()`: for what no locator assertion covers (layout,
 * scrolling, an accessibility tree, a log). On timeout it throws the last failure, saying how long it tried.
 */
export async function expectToPass(
  block: () => unknown | Promise<unknown>,
  { timeout = DEFAULT_TIMEOUT }: TimeoutOption = {},
): Promise<void> {
  const deadline = Date.now() + timeout;
  for (let attempt = 0; ; attempt++) {
    try {
      await block();
      return;
    } catch (error) {
      const left = deadline - Date.now();
      if (left <= 0) {
        if (error instanceof Error) {
          error.message = `still failing after ${timeout} ms: ${error.message}`;
          throw error;
        }
        throw new Error(`still failing after ${timeout} ms: ${String(error)}`);
      }
      await sleep(Math.min(BACKOFF_MS[attempt] ?? (BACKOFF_MS.at(-1) as number), left));
    }
  }
}
