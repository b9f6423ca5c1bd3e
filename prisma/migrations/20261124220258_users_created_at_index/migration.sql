-- CreateIndex
CREATE INDEX "users_created_at_id_idx" ON "users"("created_at", "id");
