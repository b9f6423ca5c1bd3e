-- The Memories page reads one statement (see MemoriesRepo.list): a page by the indexes below and the
-- count from memory_counts. The triggers and the counts of existing memories are edited in by hand:
-- Prisma has no syntax for them.

-- DropIndex
DROP INDEX "memories_user_id_deleted_at_created_at_idx";

-- CreateTable
CREATE TABLE "memory_counts" (
    "user_id" INTEGER NOT NULL,
    "active" INTEGER NOT NULL DEFAULT 0,
    "deleted" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "memory_counts_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE INDEX "memories_user_created" ON "memories"("user_id", "created_at" DESC, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "memories_user_deleted" ON "memories"("user_id", "deleted_at" DESC, "id" DESC) WHERE (deleted_at IS NOT NULL);

-- AddForeignKey
ALTER TABLE "memory_counts" ADD CONSTRAINT "memory_counts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Statement triggers: an import of 1,000 rows changes a user's count once, not 1,000 times.
CREATE FUNCTION memory_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_counts AS c (user_id, active, deleted)
    SELECT user_id, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL)
    FROM new_rows GROUP BY user_id ORDER BY user_id
  ON CONFLICT (user_id) DO UPDATE SET active = c.active + excluded.active, deleted = c.deleted + excluded.deleted;
  RETURN NULL;
END $$;

-- Deleting and restoring move a memory between the two counts; other changes leave them as they are.
CREATE FUNCTION memory_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_counts AS c (user_id, active, deleted)
    SELECT user_id, sum(a), sum(d) FROM (
      SELECT user_id, (deleted_at IS NULL)::int AS a, (deleted_at IS NOT NULL)::int AS d FROM new_rows
      UNION ALL
      SELECT user_id, -((deleted_at IS NULL)::int), -((deleted_at IS NOT NULL)::int) FROM old_rows
    ) changes
    GROUP BY user_id HAVING sum(a) <> 0 OR sum(d) <> 0 ORDER BY user_id
  ON CONFLICT (user_id) DO UPDATE SET active = c.active + excluded.active, deleted = c.deleted + excluded.deleted;
  RETURN NULL;
END $$;

-- No insert here: when a user is deleted their memory_counts row may already be gone.
CREATE FUNCTION memory_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_counts c SET active = c.active - gone.a, deleted = c.deleted - gone.d
  FROM (
    SELECT user_id, count(*) FILTER (WHERE deleted_at IS NULL) AS a, count(*) FILTER (WHERE deleted_at IS NOT NULL) AS d
    FROM old_rows GROUP BY user_id
  ) gone
  WHERE c.user_id = gone.user_id;
  RETURN NULL;
END $$;

CREATE FUNCTION memory_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_counts;
  RETURN NULL;
END $$;

CREATE TRIGGER memories_count_insert AFTER INSERT ON "memories"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_counts_inserted();
CREATE TRIGGER memories_count_update AFTER UPDATE ON "memories"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_counts_updated();
CREATE TRIGGER memories_count_delete AFTER DELETE ON "memories"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_counts_deleted();
CREATE TRIGGER memories_count_truncate AFTER TRUNCATE ON "memories"
  FOR EACH STATEMENT EXECUTE FUNCTION memory_counts_truncated();

INSERT INTO "memory_counts" ("user_id", "active", "deleted")
  SELECT "user_id", count(*) FILTER (WHERE "deleted_at" IS NULL), count(*) FILTER (WHERE "deleted_at" IS NOT NULL)
  FROM "memories" GROUP BY "user_id";
