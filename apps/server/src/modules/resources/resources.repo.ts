// The history: every resource of a user (daily messages and research reports), newest first.
import type { Query } from '../../db/database.ts';

export interface ResourceRow {
  resourceType: 'research' | 'daily_message';
  id: number;
  sortDate: Date;
  createdAt: Date;
  title: string;
  preview: string | null;
  status: string | null;
}

export function createResourcesRepo(query: Query) {
  return {
    /**
     * A page of the user's resources by sort date: older than `before` (newest first), or newer
     * than `after` (oldest first). Each resource type is one SELECT of the UNION.
     */
    list(userId: number, options: { limit: number; before?: string; after?: string }): Promise<ResourceRow[]> {
      const cursor = options.before ?? options.after ?? null;
      const op = options.after ? '>' : '<';
      const order = options.after ? 'ASC' : 'DESC';
      const bound = (column: string) =>
        cursor ? `AND ${column} ${op} ($2::timestamptz AT TIME ZONE 'UTC')` : 'AND $2::text IS NULL';
      // A daily message's research is part of the message, not an item of its own.
      return query<ResourceRow>(
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
    },
  };
}

export type ResourcesRepo = ReturnType<typeof createResourcesRepo>;
