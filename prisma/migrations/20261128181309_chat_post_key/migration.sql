-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "post_key" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "chat_messages_post_key_key" ON "chat_messages"("post_key");
