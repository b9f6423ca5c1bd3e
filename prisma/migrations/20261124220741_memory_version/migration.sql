-- A version per user that grows with every change to their memories, in the same transaction:
-- the Memories page keeps a search's matching ids in memory and reuses them while the version is
-- the same (see MemoriesService.list). The functions are edited in by hand: Prisma has no syntax for them.

-- AlterTable
ALTER TABLE "memory_counts" ADD COLUMN     "version" BIGINT NOT NULL DEFAULT 0;

-- Versions come from one sequence, so a version is never issued twice: not when a user's row goes
-- (TRUNCATE memories, a user id that comes back after RESTART IDENTITY) and is made again, which
-- would otherwise match pages kept for the old rows.
CREATE SEQUENCE memory_versions;

-- No row reads as version 0; every change takes the next number.
CREATE OR REPLACE FUNCTION memory_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_counts AS c (user_id, active, deleted, version)
    SELECT user_id, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL), nextval('memory_versions')
    FROM new_rows GROUP BY user_id ORDER BY user_id
  ON CONFLICT (user_id) DO UPDATE
    SET active = c.active + excluded.active, deleted = c.deleted + excluded.deleted, version = excluded.version;
  RETURN NULL;
END $$;

-- Every updated user's version grows (an edit changes what a search finds); deleting and restoring
-- also move a memory between the two counts.
CREATE OR REPLACE FUNCTION memory_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_counts AS c (user_id, active, deleted, version)
    SELECT user_id, sum(a), sum(d), nextval('memory_versions') FROM (
      SELECT user_id, (deleted_at IS NULL)::int AS a, (deleted_at IS NOT NULL)::int AS d FROM new_rows
      UNION ALL
      SELECT user_id, -((deleted_at IS NULL)::int), -((deleted_at IS NOT NULL)::int) FROM old_rows
    ) changes
    GROUP BY user_id ORDER BY user_id
  ON CONFLICT (user_id) DO UPDATE
    SET active = c.active + excluded.active, deleted = c.deleted + excluded.deleted, version = excluded.version;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_counts c SET active = c.active - gone.a, deleted = c.deleted - gone.d, version = nextval('memory_versions')
  FROM (
    SELECT user_id, count(*) FILTER (WHERE deleted_at IS NULL) AS a, count(*) FILTER (WHERE deleted_at IS NOT NULL) AS d
    FROM old_rows GROUP BY user_id
  ) gone
  WHERE c.user_id = gone.user_id;
  RETURN NULL;
END $$;
