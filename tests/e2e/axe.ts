// Accessibility check for end-to-end tests: runs axe-core on the page as it is now and fails on
// any serious or critical violation, naming the rule, the elements and what is wrong.
import { createRequire } from 'node:module';
import type { AxeResults, Result } from 'axe-core';
import type { Page } from 'playwright-core';

const axeSource: string = createRequire(import.meta.url)('axe-core').source;

/** Impacts that fail a test; moderate and minor ones are left to review. */
const FAILING = new Set(['serious', 'critical']);

export function describeViolations(violations: Result[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes
        .slice(0, 5)
        .map((n) => {
          // For contrast, the element the background was taken from.
          const related = [...n.any, ...n.all, ...n.none].flatMap((check) =>
            (check.relatedNodes ?? []).map((r) => r.target.join(' ')),
          );
          const summary = n.failureSummary?.replace(/\s+/g, ' ').trim() ?? '';
          return `    ${n.target.join(' ')}: ${summary}${related.length ? ` (related: ${related.join(', ')})` : ''}`;
        })
        .join('\n');
      const more = v.nodes.length > 5 ? `\n    ...and ${v.nodes.length - 5} more` : '';
      return `  [${v.impact}] ${v.id}: ${v.help}\n${nodes}${more}`;
    })
    .join('\n');
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules plus best practices) on `page` and throws when it finds
 * serious or critical violations. `state` names the page and state in the message.
 */
export async function expectAccessible(page: Page, state: string): Promise<void> {
  // Evaluated through the debugging protocol, so the app's Content-Security-Policy does not block it.
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.evaluate(axeSource);
  const results = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }).axe;
    // Judged as it settles: a fade caught halfway blends colours no one reads, so transitions and
    // animations jump to their end while axe looks (a constructed sheet, which the CSP allows).
    const still = new CSSStyleSheet();
    still.replaceSync('*, *::before, *::after { transition: none !important; animation: none !important; }');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, still];
    // axe counts only overflow: hidden as clipping, so text cut off by overflow: clip (a folded
    // answer) would be judged against whatever lies under it: such boxes clip with hidden meanwhile.
    const clipping = (Array.from(document.querySelectorAll('*')) as HTMLElement[]).filter((el) => {
      const style = getComputedStyle(el);
      return style.overflowX === 'clip' || style.overflowY === 'clip';
    });
    const inline = clipping.map((el) => [
      el.style.getPropertyValue('overflow'),
      el.style.getPropertyPriority('overflow'),
    ]);
    for (const el of clipping) el.style.setProperty('overflow', 'hidden', 'important');
    try {
      return await axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
        resultTypes: ['violations'],
      });
    } finally {
      for (const [i, el] of clipping.entries()) {
        el.style.setProperty('overflow', inline[i]?.[0] ?? '', inline[i]?.[1] ?? '');
      }
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((sheet) => sheet !== still);
    }
  })) as AxeResults;
  const failing = results.violations.filter((v) => FAILING.has(v.impact ?? ''));
  if (failing.length) {
    const width = page.viewportSize()?.width ?? 0;
    throw new Error(
      `axe-core found ${failing.length} serious or critical violation(s) on ${state} (${width} px, ${page.url()}):\n${describeViolations(failing)}`,
    );
  }
}
