-- AlterTable
ALTER TABLE "invites" ADD COLUMN     "grants_admin" BOOLEAN NOT NULL DEFAULT false;
