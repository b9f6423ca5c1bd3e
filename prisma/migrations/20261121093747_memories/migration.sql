-- CreateTable
CREATE TABLE "memories" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "key" VARCHAR(200) NOT NULL,
    "data" TEXT NOT NULL,
    "memory_type" TEXT NOT NULL DEFAULT 'text',
    "url" TEXT,
    "frequency_description" TEXT,
    "source" TEXT NOT NULL DEFAULT 'user',
    "source_message_id" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "deleted_at" TIMESTAMP(3),
    "deleted_reason" TEXT,

    CONSTRAINT "memories_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "memories_user_id_deleted_at_created_at_idx" ON "memories"("user_id", "deleted_at", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "memories_user_active_key" ON "memories"("user_id", "key") WHERE (deleted_at IS NULL);

-- AddForeignKey
ALTER TABLE "memories" ADD CONSTRAINT "memories_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
