-- Memories learned in the onboarding interview name it as their source (they named "chat" before),
-- so their "learned from" link can open the right conversation.
UPDATE "memories" AS m
SET "source" = 'onboarding'
FROM "chat_messages" AS c
WHERE m."source" = 'chat' AND c."id" = m."source_message_id" AND c."channel" = 'onboarding';
