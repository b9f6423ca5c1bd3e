// Answers the server put into the page for the app's first GETs (apps/server/src/plugins/web-app.ts):
// who is signed in, their account, the site. Each is used once, by the first request for its path
// while the page is new, so the app starts without waiting for those round trips; any later request
// goes to the server.
import { BOOT_ELEMENT_ID, type TBootAnswers, ZBootAnswers } from '@daybook/contracts';

export { BOOT_ELEMENT_ID };
/** After this long (from the page's start) an answer is no longer taken: it may be out of date. */
export const BOOT_FRESH_MS = 10_000;

let answers: TBootAnswers | null = null;

function read(): TBootAnswers {
  if (answers) return answers;
  answers = {};
  const element = typeof document === 'undefined' ? null : document.getElementById(BOOT_ELEMENT_ID);
  if (!element) return answers;
  element.remove();
  try {
    const parsed = ZBootAnswers.safeParse(JSON.parse(element.textContent ?? ''));
    if (parsed.success) answers = parsed.data;
  } catch {
    // Unreadable: the app asks the server as it would without the page's answers.
  }
  return answers;
}

/** The page's answer to a GET of `path`, once, as a Response; undefined when there is none to take. */
export function takeBootAnswer(path: string): Response | undefined {
  const all = read();
  const answer = all[path];
  if (!answer) return undefined;
  delete all[path];
  if (performance.now() > BOOT_FRESH_MS) return undefined;
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { 'Content-Type': 'application/json' },
  });
}

/** Whether the page carries an answer to a GET of `path` that is still to be taken. */
export function hasBootAnswer(path: string): boolean {
  return path in read() && performance.now() <= BOOT_FRESH_MS;
}

/** Forgets what was read (tests, which put new answers into the page). */
export function resetBootAnswers() {
  answers = null;
}
