-- Edited by hand: Prisma cannot express a generated column (the schema declares it as
-- Unsupported("tsvector") with a dbgenerated default, which `db:check` accepts).
-- The chat prompt's full-text match reads this column instead of running to_tsvector over every
-- memory of the user on each turn.
ALTER TABLE "memories" ADD COLUMN "search_vector" tsvector
  GENERATED ALWAYS AS (to_tsvector('simple', "key" || ' ' || "data" || ' ' || coalesce("frequency_description", ''))) STORED;

-- CreateIndex
CREATE INDEX "memories_search_vector_idx" ON "memories" USING GIN ("search_vector");

-- The Memories page search (ILIKE '%...%' on key and data) uses trigrams. pg_trgm is a trusted
-- extension: a database owner without superuser rights may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "memories_key_data_trgm_idx" ON "memories" USING GIN ("key" gin_trgm_ops, "data" gin_trgm_ops);
