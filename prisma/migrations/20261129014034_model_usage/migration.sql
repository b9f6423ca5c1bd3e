-- CreateTable
CREATE TABLE "model_usage" (
    "user_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "purpose" TEXT NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "cached_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "model_usage_pkey" PRIMARY KEY ("user_id","day","purpose")
);

-- CreateIndex
CREATE INDEX "model_usage_day_idx" ON "model_usage"("day");

-- AddForeignKey
ALTER TABLE "model_usage" ADD CONSTRAINT "model_usage_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
