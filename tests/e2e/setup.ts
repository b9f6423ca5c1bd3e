// When an end-to-end test fails, what its server said during the test is printed beside the failure:
// CI keeps only the output, and a browser waiting in vain says nothing of why the server did not answer.
import { afterEach, beforeEach } from 'vitest';
import { runningApps } from './harness.ts';

const SHOWN = 60;
const from = new Map<object, number>();

beforeEach(() => {
  for (const app of runningApps) from.set(app, app.logs().length);
});

afterEach(({ task }) => {
  if (task.result?.state !== 'fail') return;
  for (const app of runningApps) {
    const lines = app
      .logs()
      .slice(from.get(app) ?? 0)
      .split('\n')
      .filter(Boolean);
    const shown = lines.slice(-SHOWN).map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line));
    console.error(
      `The server at ${app.baseUrl} during "${task.name}" (${lines.length} lines, the last ${shown.length}):\n${shown.join('\n')}`,
    );
  }
});
