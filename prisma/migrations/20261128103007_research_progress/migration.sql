-- AlterTable
ALTER TABLE "researches" ADD COLUMN     "progress" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "stage" TEXT,
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 0;
