-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "answer_pending_at" TIMESTAMP(3),
ADD COLUMN     "reply_to_id" INTEGER;

-- CreateIndex
CREATE INDEX "chat_messages_answer_pending_idx" ON "chat_messages"("answer_pending_at") WHERE (answer_pending_at IS NOT NULL);
