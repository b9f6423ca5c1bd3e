-- AlterTable
ALTER TABLE "users" ADD COLUMN     "learn_from_chats" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "onboarded_at" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "chat_messages" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "channel" TEXT NOT NULL DEFAULT 'chat',
    "author_type" TEXT NOT NULL,
    "message_type" TEXT NOT NULL,
    "raw_text" TEXT NOT NULL,
    "url" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "chat_messages_user_id_channel_id_idx" ON "chat_messages"("user_id", "channel", "id");

-- AddForeignKey
ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
