-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "window_start" BOOLEAN NOT NULL DEFAULT false;
