// The model check as an operator reads it in a terminal (npm run check-model).
import type { TModelCheck } from '@daybook/contracts';

const MARK = { ok: '✔', degraded: '!', failed: '✖', skipped: '-' } as const;

export function formatModelCheck(check: TModelCheck): string {
  const lines = [
    check.model
      ? `Daybook model check: ${check.model} at ${check.endpoint}`
      : 'Daybook model check: no model is configured',
    '',
  ];
  const width = Math.max(...check.checks.map((c) => c.name.length));
  for (const c of check.checks) {
    lines.push(`  ${MARK[c.status]} ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.advice) lines.push(`    ${' '.repeat(width)}  → ${c.advice}`);
  }
  if (check.uses.length) lines.push('', 'Daybook will use:', ...check.uses.map((u) => `  - ${u}`));
  lines.push(
    '',
    check.ok
      ? 'The chat and its structured answers work with this model.'
      : 'Daybook cannot use this model as configured.',
  );
  return lines.join('\n');
}
