-- CreateTable
CREATE TABLE "researches" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "query" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "origin" TEXT NOT NULL DEFAULT 'chat',
    "request_message_id" INTEGER,
    "introduction" TEXT,
    "body" TEXT,
    "conclusion" TEXT,
    "sources" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT,
    "pages_found" INTEGER NOT NULL DEFAULT 0,
    "pages_read" INTEGER NOT NULL DEFAULT 0,
    "pages_failed" INTEGER NOT NULL DEFAULT 0,
    "usage" JSONB NOT NULL DEFAULT '{}',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "finished_at" TIMESTAMP(3),
    "heartbeat_at" TIMESTAMP(3),
    "not_before" TIMESTAMP(3),
    "report_message_id" INTEGER,

    CONSTRAINT "researches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "researches_user_id_created_at_id_idx" ON "researches"("user_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "researches_status_user_id_idx" ON "researches"("status", "user_id");

-- AddForeignKey
ALTER TABLE "researches" ADD CONSTRAINT "researches_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
