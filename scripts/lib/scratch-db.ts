// Benchmarks never write to the database DATABASE_URL names: they create a scratch database on the
// same server and drop it afterwards.
import pg from 'pg';

export async function scratchDatabase(serverUrl: string) {
  const name = `daybook_bench_${Date.now().toString(36)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
