// The data `npm run bench` measures against, written fast: one account signed up through the
// product's HTTP API (the installation's first, so an administrator), then straight into its tables
// with SQL: 10,000 memories, chat history, research reports and daily messages for that account,
// and more accounts (copies of the first, with sessions) for the chat users and the idle sockets.
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';

export const BENCH_PASSWORD = 'bench password 123';
export const MEMORY_COUNT = 10_000;

const WORDS = ['coffee', 'garden', 'running', 'lisbon', 'guitar', 'python', 'sister', 'ferry', 'bread', 'chess'];
const TYPES = ['text', 'interest', 'activity', 'preference', 'person'];

/** Cookies from Set-Cookie headers, merged into `jar`. */
function keepCookies(res: Response, jar: Map<string, string>) {
  for (const line of res.headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
}

export interface SignedIn {
  /** The Cookie header: the session and the CSRF token. */
  cookie: string;
  cookies: Record<string, string>;
  csrf: string;
}

/** A real signup over HTTP with an invite token (the product signs the new account in). */
export async function signUp(base: string, origin: string, token: string, email: string): Promise<SignedIn> {
  const jar = new Map<string, string>();
  keepCookies(await fetch(`${base}/_allauth/browser/v1/config`), jar);
  const csrf = jar.get('csrftoken') ?? '';
  const res = await fetch(`${base}/api/auth/signup/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-csrftoken': csrf,
      origin,
      cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
    },
    body: JSON.stringify({ email, password1: BENCH_PASSWORD, password2: BENCH_PASSWORD, inviteToken: token }),
  });
  if (res.status !== 201) throw new Error(`signup answered ${res.status}: ${await res.text()}`);
  keepCookies(res, jar);
  if (!jar.get('sessionid')) throw new Error('signup set no session cookie');
  return {
    cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
    cookies: Object.fromEntries(jar),
    csrf: jar.get('csrftoken') ?? csrf,
  };
}

export interface Seeded {
  userId: number;
  memoryId: number;
  researchId: number;
  dailyMessageId: number;
  /** Cookie headers of the copied accounts, one session each. */
  clones: string[];
}

/**
 * Fills the signed-up account `email` and adds `cloneCount` accounts like it. Sessions are what the
 * product stores: the SHA-256 of a random key, the key in the `sessionid` cookie.
 */
export async function seed(db: pg.Client, email: string, cloneCount: number): Promise<Seeded> {
  const one = async <T>(sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows[0] as T;
  // Onboarded, as a user of the chat is (the chat page of one who is not opens the interview).
  const { id: userId } = await one<{ id: number }>(
    'UPDATE users SET onboarded_at = now() WHERE email = $1 RETURNING id',
    [email],
  );
  const words = `ARRAY[${WORDS.map((w) => `'${w}'`).join(',')}]`;
  const types = `ARRAY[${TYPES.map((w) => `'${w}'`).join(',')}]`;
  // Newest first is memory 10,000; "detail 42" matches 111 of them (42, 420-429, 4200-4299).
  await db.query(
    `INSERT INTO memories (user_id, key, data, memory_type, source, created_at, updated_at)
     SELECT $1, 'fact ' || i,
            'Some detail ' || i || ' about ' || (${words})[1 + i % 10] || ', ' || (${words})[1 + (i * 3) % 10]
              || ' and ' || (${words})[1 + (i * 7) % 10],
            (${types})[1 + i % 5], 'import',
            now() - make_interval(mins => ${MEMORY_COUNT} - i), now() - make_interval(mins => ${MEMORY_COUNT} - i)
     FROM generate_series(1, ${MEMORY_COUNT}) AS i`,
    [userId],
  );
  const { id: memoryId } = await one<{ id: number }>(
    'SELECT id FROM memories WHERE user_id = $1 ORDER BY id DESC LIMIT 1',
    [userId],
  );
  // 200 messages of history: a question and its answer, 100 times.
  await db.query(
    `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, created_at)
     SELECT $1, 'chat', CASE WHEN i % 2 = 0 THEN 'human' ELSE 'assistant' END,
            CASE WHEN i % 2 = 0 THEN 'message' ELSE 'markdown' END,
            CASE WHEN i % 2 = 0 THEN 'What should I read this week, part ' || i || '?'
                 ELSE 'Here are **three** ideas for this week, part ' || i || ':' || E'\\n\\n- one\\n- two\\n- three' END,
            now() - make_interval(mins => 400 - i)
     FROM generate_series(0, 199) AS i`,
    [userId],
  );
  // 30 finished research reports with 5 sources each (already posted to the chat, or the server's
  // worker would post them while the benchmark runs), and 30 delivered daily messages.
  const sources = JSON.stringify(
    Array.from({ length: 5 }, (_, i) => ({ url: `https://example.com/article-${i + 1}`, title: `Article ${i + 1}` })),
  );
  await db.query(
    `INSERT INTO researches (user_id, query, status, origin, introduction, body, conclusion, sources,
                             pages_found, pages_read, created_at, started_at, finished_at, report_message_id)
     SELECT $1, 'Research topic ' || i, 'done', 'chat', 'What the sources say [1].',
            '### Findings' || E'\\n\\n' || repeat('A finding with a citation [2]. ', 40), 'In short [1].', $2::jsonb,
            15, 15, now() - make_interval(hours => i), now() - make_interval(hours => i),
            now() - make_interval(hours => i) + interval '40 seconds',
            (SELECT max(id) FROM chat_messages WHERE user_id = $1)
     FROM generate_series(1, 30) AS i`,
    [userId, sources],
  );
  const { id: researchId } = await one<{ id: number }>(
    'SELECT id FROM researches WHERE user_id = $1 ORDER BY id DESC LIMIT 1',
    [userId],
  );
  await db.query(
    `INSERT INTO daily_messages (user_id, local_date, status, trigger, message_text, created_at, composed_at, delivered_at)
     SELECT $1, current_date - i, 'delivered', 'schedule',
            '**Good morning.** ' || repeat('Here is what your day holds. ', 20),
            now() - make_interval(days => i), now() - make_interval(days => i), now() - make_interval(days => i)
     FROM generate_series(1, 30) AS i`,
    [userId],
  );
  const { id: dailyMessageId } = await one<{ id: number }>(
    'SELECT id FROM daily_messages WHERE user_id = $1 ORDER BY id DESC LIMIT 1',
    [userId],
  );

  // Copies of the account (same password hash and settings), each signed in once.
  await db.query(
    `INSERT INTO users (email, password_hash, onboarded_at, password_changed_at, time_zone)
     SELECT 'clone-' || i || '@bench.example', u.password_hash, now(), u.password_changed_at, u.time_zone
     FROM users u, generate_series(1, $2::int) AS i WHERE u.id = $1`,
    [userId, cloneCount],
  );
  await db.query(
    `INSERT INTO email_addresses (user_id, email, verified, "primary")
     SELECT id, email, false, true FROM users WHERE email LIKE 'clone-%@bench.example'`,
  );
  const { rows: cloneRows } = await db.query<{ id: number }>(
    `SELECT id FROM users WHERE email LIKE 'clone-%@bench.example'
     ORDER BY substring(email from 'clone-(\\d+)@')::int`,
  );
  const keys = cloneRows.map(() => randomBytes(32).toString('base64url'));
  await db.query(
    `INSERT INTO sessions (id, user_id, data, expires_at)
     SELECT k.id, k.user_id, s.data, now() + interval '14 days'
     FROM unnest($1::text[], $2::int[]) AS k(id, user_id),
          (SELECT data FROM sessions WHERE user_id = $3 LIMIT 1) AS s`,
    [keys.map((k) => createHash('sha256').update(k).digest('hex')), cloneRows.map((r) => r.id), userId],
  );
  // As autovacuum would have by the time an account is this big; and done now, with the seed's
  // writes flushed, so neither autovacuum nor the checkpointer works through them during a measurement.
  await db.query('VACUUM ANALYZE');
  await db.query('CHECKPOINT');
  return { userId, memoryId, researchId, dailyMessageId, clones: keys.map((k) => `sessionid=${k}`) };
}
