// The history: every resource of a user (daily messages and research reports), newest first.
import type { Query } from '../../db/database.ts';

/** One row of the history, its times already as the API writes them (toISOString's form). */
export interface ResourceRow {
  resourceType: 'research' | 'daily_message';
  id: number;
  sortDate: string;
  createdAt: string;
  title: string;
  /** A daily message's first 600 characters of markdown; null for research. */
  preview: string | null;
  status: string | null;
}

// PostgreSQL writes the ISO text faster than the driver parses Dates and JavaScript formats them again.
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One statement per kind of page (first, older, newer), each prepared once per connection. Each
 * resource type is one SELECT of the UNION; the text work (the dates, the preview's cut) is done on
 * the page's rows only, after the limit.
 */
function pageSql(cursor: 'before' | 'after' | null): string {
  const op = cursor === 'after' ? '>' : '<';
  const order = cursor === 'after' ? 'ASC' : 'DESC';
  const bound = (column: string) =>
    cursor ? `AND ${column} ${op} ($2::timestamptz AT TIME ZONE 'UTC')` : 'AND $2::text IS NULL';
  // A daily message's research is part of the message, not an item of its own.
  return `SELECT "resourceType", id, ${iso('sort_at')} AS "sortDate", ${iso('created_at')} AS "createdAt",
      CASE WHEN "resourceType" = 'research' THEN title ELSE to_char(day, 'YYYY-MM-DD') END AS title,
      left(body, 600) AS preview, status
    FROM (
      (SELECT 'research' AS "resourceType", id, created_at AS sort_at, created_at, query AS title,
         NULL::date AS day, NULL::text AS body, status
       FROM researches WHERE user_id = $1 AND origin = 'chat' ${bound('created_at')}
       ORDER BY created_at ${order}, id ${order} LIMIT $3)
      UNION ALL
      (SELECT 'daily_message', id, delivered_at, created_at, NULL, local_date, message_text, NULL
       FROM daily_messages WHERE user_id = $1 AND delivered_at IS NOT NULL ${bound('delivered_at')}
       ORDER BY delivered_at ${order}, id ${order} LIMIT $3)
      ORDER BY sort_at ${order}, "resourceType" ${order}, id ${order} LIMIT $3
    ) page
    ORDER BY sort_at ${order}, "resourceType" ${order}, id ${order}`;
}

const PAGES = {
  first: { text: pageSql(null), name: 'daybook_resources_first' },
  before: { text: pageSql('before'), name: 'daybook_resources_before' },
  after: { text: pageSql('after'), name: 'daybook_resources_after' },
};

export function createResourcesRepo(query: Query) {
  return {
    /**
     * A page of the user's resources by sort date: older than `before` (newest first), or newer
     * than `after` (oldest first).
     */
    list(userId: number, options: { limit: number; before?: string; after?: string }): Promise<ResourceRow[]> {
      const page = options.after ? PAGES.after : options.before ? PAGES.before : PAGES.first;
      const cursor = options.before ?? options.after ?? null;
      return query<ResourceRow>(page.text, [userId, cursor, options.limit], page.name);
    },
  };
}

export type ResourcesRepo = ReturnType<typeof createResourcesRepo>;
