-- AlterTable
ALTER TABLE "researches" ADD COLUMN     "daily_message_id" INTEGER;

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "daily_message_email" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "daily_message_time" TEXT NOT NULL DEFAULT '07:00',
ADD COLUMN     "latitude" DOUBLE PRECISION,
ADD COLUMN     "location_country" TEXT,
ADD COLUMN     "location_name" TEXT,
ADD COLUMN     "longitude" DOUBLE PRECISION,
ADD COLUMN     "temperature_unit" TEXT NOT NULL DEFAULT 'auto';

-- CreateTable
CREATE TABLE "daily_messages" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "local_date" DATE NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "trigger" TEXT NOT NULL DEFAULT 'schedule',
    "message_text" TEXT,
    "notes" JSONB NOT NULL DEFAULT '{}',
    "research_requested_at" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "run_at" TIMESTAMP(3),
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "composed_at" TIMESTAMP(3),
    "delivered_at" TIMESTAMP(3),
    "chat_message_id" INTEGER,
    "email_claimed_at" TIMESTAMP(3),
    "emailed_at" TIMESTAMP(3),

    CONSTRAINT "daily_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "daily_messages_user_id_delivered_at_id_idx" ON "daily_messages"("user_id", "delivered_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "daily_messages_status_created_at_idx" ON "daily_messages"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "daily_messages_user_id_local_date_key" ON "daily_messages"("user_id", "local_date");

-- CreateIndex
CREATE INDEX "researches_daily_message_id_idx" ON "researches"("daily_message_id");

-- AddForeignKey
ALTER TABLE "researches" ADD CONSTRAINT "researches_daily_message_id_fkey" FOREIGN KEY ("daily_message_id") REFERENCES "daily_messages"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_messages" ADD CONSTRAINT "daily_messages_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
