-- CreateTable
CREATE TABLE "model_permits" (
    "id" SERIAL NOT NULL,
    "endpoint" TEXT NOT NULL,
    "priority" SMALLINT NOT NULL,
    "user_id" INTEGER,
    "holder" TEXT NOT NULL,
    "granted" BOOLEAN NOT NULL DEFAULT false,
    "heartbeat_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_permits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "model_permits_endpoint_granted_idx" ON "model_permits"("endpoint", "granted");

-- CreateIndex
CREATE INDEX "model_permits_holder_idx" ON "model_permits"("holder");

-- One pass of the queue of an endpoint (model/model.gate.ts), under a lock of that endpoint: gives
-- back p_release (a call that ended), adds p_wait (a call that asks: {priority, user_id, holder}),
-- drops the rows of processes that stopped refreshing them, grants waiting rows in order (priority,
-- then the user with the fewest granted calls, then arrival) while fewer than p_limit are granted
-- (the last p_reserve only to priority 0, the chat), and returns the added row's id and which of it
-- and p_mine are granted: a call that can go at once costs one round trip.
CREATE FUNCTION model_permits_pass(
  p_endpoint TEXT, p_limit INTEGER, p_reserve INTEGER, p_stale_seconds INTEGER, p_mine INTEGER[],
  p_release INTEGER, p_wait JSONB
) RETURNS TABLE (id INTEGER, granted BOOLEAN) LANGUAGE plpgsql AS $$
DECLARE
  running INTEGER;
  waiting RECORD;
  added INTEGER;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('model_permits:' || p_endpoint));
  IF p_release IS NOT NULL THEN
    DELETE FROM model_permits m WHERE m.id = p_release;
  END IF;
  IF p_wait IS NOT NULL THEN
    INSERT INTO model_permits (endpoint, priority, user_id, holder, heartbeat_at)
    VALUES (p_endpoint, (p_wait->>'priority')::SMALLINT, (p_wait->>'user_id')::INTEGER, p_wait->>'holder',
            now() AT TIME ZONE 'UTC')
    RETURNING model_permits.id INTO added;
  END IF;
  DELETE FROM model_permits m
   WHERE m.endpoint = p_endpoint
     AND m.heartbeat_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => p_stale_seconds);
  SELECT count(*) INTO running FROM model_permits m WHERE m.endpoint = p_endpoint AND m.granted;
  FOR waiting IN
    SELECT w.id, w.priority FROM model_permits w
     WHERE w.endpoint = p_endpoint AND NOT w.granted
     ORDER BY w.priority,
              (SELECT count(*) FROM model_permits g
                WHERE g.endpoint = p_endpoint AND g.granted AND g.user_id = w.user_id),
              w.id
  LOOP
    EXIT WHEN running >= p_limit OR (waiting.priority > 0 AND running >= p_limit - p_reserve);
    UPDATE model_permits m SET granted = true, heartbeat_at = now() AT TIME ZONE 'UTC' WHERE m.id = waiting.id;
    running := running + 1;
  END LOOP;
  RETURN QUERY
    SELECT m.id, m.granted FROM model_permits m
     WHERE m.id = added OR (m.id = ANY(p_mine) AND m.granted);
END $$;
