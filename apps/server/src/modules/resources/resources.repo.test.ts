// The history's statements against a real database: the same items, order, cursors and previews as
// the first version (Dates parsed and formatted in JavaScript, kept here as the reference).
import { RESOURCES_PREVIEW_MAX, type TResourceItem } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { createResourcesRepo } from './resources.repo.ts';
import { createResourcesService, previewOf } from './resources.service.ts';

let t: TestDatabase;
let owner: number;
let stranger: number;

interface ReferenceRow {
  resourceType: 'research' | 'daily_message';
  id: number;
  sortDate: Date;
  createdAt: Date;
  title: string;
  preview: string | null;
  status: string | null;
}

/** The first version's preview: the markup's rules, cut with Array.from. */
function referencePreview(markdown: string): string {
  const words = markdown
    .replace(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/gm, (_m, h: string) => (/[.:!?]$/.test(h) ? h : `${h}:`))
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[#*_`>|~]+/g, '')
    .replace(/\\(.)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  return Array.from(words).slice(0, RESOURCES_PREVIEW_MAX).join('');
}

/** The first version's statement and presenter. */
async function reference(
  userId: number,
  options: { limit: number; before?: string; after?: string },
): Promise<TResourceItem[]> {
  const cursor = options.before ?? options.after ?? null;
  const op = options.after ? '>' : '<';
  const order = options.after ? 'ASC' : 'DESC';
  const bound = (column: string) =>
    cursor ? `AND ${column} ${op} ($2::timestamptz AT TIME ZONE 'UTC')` : 'AND $2::text IS NULL';
  const rows = await t.db.query<ReferenceRow>(
    `(SELECT 'research' AS "resourceType", id, created_at AS "sortDate", created_at AS "createdAt",
       query AS title, NULL AS preview, status
     FROM researches WHERE user_id = $1 AND origin = 'chat' ${bound('created_at')}
     ORDER BY "sortDate" ${order}, id ${order} LIMIT $3)
     UNION ALL
     (SELECT 'daily_message', id, delivered_at, created_at, to_char(local_date, 'YYYY-MM-DD'),
       left(message_text, 600), NULL
     FROM daily_messages WHERE user_id = $1 AND delivered_at IS NOT NULL ${bound('delivered_at')}
     ORDER BY delivered_at ${order}, id ${order} LIMIT $3)
     ORDER BY "sortDate" ${order}, "resourceType" ${order}, id ${order} LIMIT $3`,
    [userId, cursor, options.limit],
  );
  return rows.map((row) => ({
    resource_type: row.resourceType,
    id: row.id,
    sort_date: row.sortDate.toISOString(),
    created: row.createdAt.toISOString(),
    title: row.title,
    preview: row.preview === null ? null : referencePreview(row.preview),
    status: row.resourceType === 'research' ? (row.status as TResourceItem['status']) : null,
  }));
}

beforeAll(async () => {
  t = await createTestDatabase();
  const users = await t.db.query<{ id: number }>(
    `INSERT INTO users (email, password_hash) VALUES ('owner@example.com', 'x'), ('stranger@example.com', 'x') RETURNING id`,
  );
  owner = users[0]?.id ?? 0;
  stranger = users[1]?.id ?? 0;
  // Research every 5 hours and a daily message every 10, so some share a sort date with a research
  // report (the type, then the id, break the tie), plus rows that are not part of the history.
  await t.db.query(
    `INSERT INTO researches (user_id, query, status, origin, created_at)
     SELECT u, 'topic ' || i, CASE WHEN i % 3 = 0 THEN 'failed' ELSE 'done' END,
            CASE WHEN i % 7 = 0 THEN 'daily' ELSE 'chat' END,
            timestamp '2026-11-20 12:00:00.123' - make_interval(hours => 5 * i)
     FROM unnest(ARRAY[$1::int, $2::int]) AS u, generate_series(1, 40) AS i`,
    [owner, stranger],
  );
  await t.db.query(
    `INSERT INTO daily_messages (user_id, local_date, status, trigger, message_text, created_at, delivered_at)
     SELECT u, date '2026-11-20' - i, 'delivered', 'schedule',
            '## Weather in Lisbon ' || i || E'\n\nLight *rain*, see [the forecast](https://example.com/' || i || '). 🎉 '
              || repeat('Here is what your day holds. ', 30),
            timestamp '2026-11-20 06:00:00' - make_interval(days => i),
            CASE WHEN i % 5 = 0 THEN NULL ELSE timestamp '2026-11-20 12:00:00.123' - make_interval(hours => 10 * i) END
     FROM unnest(ARRAY[$1::int, $2::int]) AS u, generate_series(1, 25) AS i`,
    [owner, stranger],
  );
});

afterAll(async () => {
  await t?.dispose();
});

describe('resources repo', () => {
  it('lists the same pages as the first version, first pages and both cursors', async () => {
    const service = createResourcesService({ repo: createResourcesRepo(t.db.query) });
    const all = await reference(owner, { limit: 100 });
    expect(all.length).toBeGreaterThan(50);
    expect(all.some((r) => r.resource_type === 'daily_message' && r.preview)).toBe(true);
    const cursors = [all[0], all[7], all[8], all[30], all.at(-1)].map((r) => r?.sort_date ?? '');
    const cases = [
      { limit: 30 },
      { limit: 1 },
      { limit: 100 },
      ...cursors.flatMap((c) => [
        { limit: 10, before: c },
        { limit: 10, after: c },
      ]),
    ];
    for (const options of cases) {
      // Twice: the second read takes its previews from the cache.
      for (let i = 0; i < 2; i++) {
        expect(await service.list(owner, options)).toEqual(await reference(owner, options));
      }
    }
  });

  it("never lists another user's resources", async () => {
    const service = createResourcesService({ repo: createResourcesRepo(t.db.query) });
    const mine = await service.list(owner, { limit: 100 });
    const theirs = await service.list(stranger, { limit: 100 });
    const ids = (items: TResourceItem[]) => new Set(items.map((r) => `${r.resource_type}:${r.id}`));
    expect([...ids(mine)].filter((id) => ids(theirs).has(id))).toEqual([]);
    expect(await service.list(stranger + 1000, { limit: 100 })).toEqual([]);
  });
});

describe('previewOf', () => {
  it('cuts by characters, never inside an emoji', () => {
    const text = `${'a'.repeat(RESOURCES_PREVIEW_MAX - 1)}🎉🎉`;
    expect(previewOf(text)).toBe(`${'a'.repeat(RESOURCES_PREVIEW_MAX - 1)}🎉`);
    expect(previewOf('🎉'.repeat(RESOURCES_PREVIEW_MAX + 5))).toBe('🎉'.repeat(RESOURCES_PREVIEW_MAX));
    // A lone surrogate counts as one character, as Array.from counts it.
    const lone = `\ud83d${'b'.repeat(RESOURCES_PREVIEW_MAX)}`;
    expect(previewOf(lone)).toBe(referencePreview(lone));
  });
});
