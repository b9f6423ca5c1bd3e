-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "client_id" TEXT;

-- CreateTable
CREATE TABLE "realtime_events" (
    "id" BIGSERIAL NOT NULL,
    "origin" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "realtime_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "realtime_events_created_at_idx" ON "realtime_events"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "chat_messages_user_client_id_key" ON "chat_messages"("user_id", "client_id");
