-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "stopped" BOOLEAN NOT NULL DEFAULT false;
