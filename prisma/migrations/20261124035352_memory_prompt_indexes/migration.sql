-- The chat prompt's recent and core memories (see selectionQuery in memories.repo.ts, whose core
-- condition this predicate repeats) without reading every memory of the user.
-- CreateIndex
CREATE INDEX "memories_user_recent" ON "memories"("user_id", "updated_at" DESC, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "memories_user_core" ON "memories"("user_id", "updated_at" DESC, "id" DESC) WHERE (deleted_at IS NULL) AND ((memory_type = 'location'::text) OR ((key)::text ~~* '%name%'::text) OR ((key)::text ~~* '%time zone%'::text) OR ((key)::text ~~* '%timezone%'::text));
