// A worker thread of the ICS pool (ics-pool.ts): parses calendars and expands a day's events, so a
// large or hostile calendar costs this thread (with a heap limit and a deadline), never the server's
// event loop. Parsed calendars are kept by their text's digest for the next days asked for.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';

// The server runs TypeScript through tsx; a compiled build has ics.js beside this file.
const compiled = new URL('./ics.js', import.meta.url);
let ics;
if (existsSync(fileURLToPath(compiled))) {
  ics = await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ics = await import(new URL('./ics.ts', import.meta.url).href);
}

/** Parsed calendars, newest last; few, since each may hold a large calendar. */
const parsed = new Map();
const KEEP = 8;

parentPort.on('message', ({ id, key, text, window }) => {
  try {
    let calendar = parsed.get(key);
    if (calendar) parsed.delete(key);
    else calendar = ics.parseIcs(text);
    parsed.set(key, calendar);
    if (parsed.size > KEEP) parsed.delete(parsed.keys().next().value);
    const events = window
      ? calendar.events({ ...window, start: new Date(window.start), end: new Date(window.end) })
      : [];
    parentPort.postMessage({ id, ok: true, name: calendar.name, notes: calendar.notes, events });
  } catch (err) {
    const notCalendar = err instanceof ics.IcsError;
    parentPort.postMessage({ id, ok: false, error: notCalendar ? `ics:${err.message}` : String(err?.message ?? err) });
  }
});

parentPort.postMessage({ ready: true });
