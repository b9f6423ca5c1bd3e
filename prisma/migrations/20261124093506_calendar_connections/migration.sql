-- AlterTable
ALTER TABLE "users" ADD COLUMN     "time_zone" TEXT;

-- CreateTable
CREATE TABLE "calendar_connections" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "provider" TEXT NOT NULL,
    "uid" TEXT NOT NULL,
    "display" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'connected',
    "secret" TEXT NOT NULL,
    "access_expires_at" TIMESTAMP(3),
    "refresh_lock_until" TIMESTAMP(3),
    "last_synced_at" TIMESTAMP(3),
    "last_error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "calendar_connections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "calendar_oauth_states" (
    "state_hash" TEXT NOT NULL,
    "user_id" INTEGER NOT NULL,
    "provider" TEXT NOT NULL,
    "verifier" TEXT NOT NULL,
    "callback_url" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "calendar_oauth_states_pkey" PRIMARY KEY ("state_hash")
);

-- CreateIndex
CREATE INDEX "calendar_connections_user_id_id_idx" ON "calendar_connections"("user_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "calendar_connections_provider_uid_key" ON "calendar_connections"("provider", "uid");

-- CreateIndex
CREATE INDEX "calendar_oauth_states_expires_at_idx" ON "calendar_oauth_states"("expires_at");

-- AddForeignKey
ALTER TABLE "calendar_connections" ADD CONSTRAINT "calendar_connections_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calendar_oauth_states" ADD CONSTRAINT "calendar_oauth_states_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
