// The chat protocol: JSON over the WebSockets /ws/chat/ and /ws/onboarding/, and chat history over
// HTTP. Every message type is defined here once; server and web parse with these schemas.
import { z } from 'zod';
import { MAX_ROW_ID, thousands, ZRowId } from './common.ts';
import { ZResearchCard } from './research.ts';

export const CHAT_TEXT_MAX = 8000;
export const CHAT_HISTORY_SIZE = 50;

/** Texts the server sends and the web client shows on its own, kept the same here. */
export const CHAT_TOO_LONG = `Messages can be at most ${thousands(CHAT_TEXT_MAX)} characters.`;
export const ONBOARDING_FINISHED = "You've finished onboarding. Tell Daybook more any time in your chat.";
/** Notes in place of an answer that the client offers to ask again (they carry reply_to). */
export const ASSISTANT_UNAVAILABLE = 'The assistant is unavailable right now, please try again';
export const ANSWER_INTERRUPTED = 'The answer was interrupted. Ask again to get one.';

/** WebSocket close codes the client's reconnect policy keys on. */
export const CLOSE_CODES = {
  normal: 1000,
  policyViolation: 1008,
  /** The server is shutting down (a restart or a deploy): reconnect at once, to another instance. */
  serviceRestart: 1012,
  tryAgainLater: 1013,
} as const;

/** The two conversations each user has: the chat, and the onboarding interview (/ws/<channel>/). */
export const ZChatChannel = z.enum(['chat', 'onboarding']);
export type TChatChannel = z.infer<typeof ZChatChannel>;

export const ZAuthorType = z.enum(['human', 'assistant', 'system']);
export type TAuthorType = z.infer<typeof ZAuthorType>;

/** The spec's message types. */
export const ZMessageType = z.enum([
  'message',
  'markdown',
  'research_report',
  'system_message',
  'redirect',
  'task_notification',
  'task_notification_final',
]);
export type TMessageType = z.infer<typeof ZMessageType>;

export const ZChatMessage = z.object({
  author_type: ZAuthorType,
  message_type: ZMessageType,
  raw_text: z.string(),
  /** Stored messages have an id; transient ones (task notifications) have null. */
  message_id: z.number().int().nullable(),
  /** ISO 8601. */
  timestamp: z.string(),
  /** Where a redirect message sends the client. */
  url: z.string().optional(),
  /** On the final markdown message of a streamed reply: the stream it completes. */
  stream_id: z.string().optional(),
  /**
   * Additive: on an answer, or a system note in its place (the model failed, the answer was
   * interrupted), the message_id of the human message it answers: its text can be asked again.
   */
  reply_to: z.number().int().optional(),
  /** Additive: an answer the user stopped while it was written; raw_text is what it said until then. */
  stopped: z.literal(true).optional(),
});
export type TChatMessage = z.infer<typeof ZChatMessage>;

/** Shown under an answer the user stopped. */
export const ANSWER_STOPPED = 'Stopped';

// ---- additive server → client types (documented in docs/chat.md "Chat protocol") ----

/** Sent once right after connecting: the most recent messages, oldest first. */
export const ZHistoryEvent = z.object({
  message_type: z.literal('history'),
  messages: z.array(ZChatMessage),
  has_more: z.boolean(),
  /**
   * Additive: answers being written right now (in any tab, on any instance), with their text so far;
   * the next `stream` events with the same stream_id continue it.
   */
  streams: z
    .array(z.object({ stream_id: z.string(), raw_text: z.string(), reply_to: z.number().int().optional() }))
    .optional(),
  /**
   * Additive: the user's human messages whose answer is on its way but has not begun (the model is
   * thinking, or they wait their turn), oldest first.
   */
  answering: z.array(z.number().int()).optional(),
  /** Additive: the user's researches asked for in the chat that have not ended, oldest first. */
  researches: z.array(ZResearchCard).optional(),
});

/** A piece of an assistant reply while it is generated; the final `markdown` message carries the same stream_id. */
export const ZStreamEvent = z.object({
  message_type: z.literal('stream'),
  author_type: z.literal('assistant'),
  stream_id: z.string(),
  /** The new text only; append it to what came before. */
  raw_text: z.string(),
  /** Additive: the human message being answered. */
  reply_to: z.number().int().optional(),
});

/** The server could not accept what the client sent; the connection stays open. */
export const ZErrorEvent = z.object({
  message_type: z.literal('error'),
  author_type: z.literal('system'),
  code: z.enum([
    'invalid_json',
    'invalid_message',
    'empty_message',
    'message_too_long',
    'rate_limited',
    /** A message to /ws/onboarding/ from a user who finished onboarding; the chat takes it. */
    'onboarding_finished',
    /**
     * Regenerate/Retry of a message answered since, the conversation having gone on (only a message
     * without an answer, or whose latest reply is the latest message, is answered again).
     */
    'already_answered',
  ]),
  raw_text: z.string(),
});

/**
 * A human message waits for its answer: Daybook answers one message of a user at a time, and
 * `ahead` answers come first. Its answer arrives as usual, carrying reply_to.
 */
export const ZQueuedEvent = z.object({
  message_type: z.literal('queued'),
  author_type: z.literal('system'),
  message_id: z.number().int(),
  ahead: z.number().int().positive(),
  raw_text: z.string(),
});

/**
 * Additive: a research asked for in the chat moved on (a step of its run, or its end). Its outcome
 * then arrives as a message: the research_report, or a system_message whose url is the research's page.
 */
export const ZResearchEvent = z.object({ message_type: z.literal('research'), research: ZResearchCard });

/** Additive: the answer to a client's `ping`, to that socket only. */
export const ZPongEvent = z.object({ message_type: z.literal('pong') });

export const ZServerEvent = z.union([
  ZChatMessage,
  ZHistoryEvent,
  ZStreamEvent,
  ZErrorEvent,
  ZQueuedEvent,
  ZResearchEvent,
  ZPongEvent,
]);
export type TServerEvent = z.infer<typeof ZServerEvent>;

// ---- client → server ----

export const ZClientMessage = z.object({
  author_type: z.literal('human'),
  message_type: z.literal('message'),
  raw_text: z.string(),
  timestamp: z.string().optional(),
  /**
   * Additive: the client's own id for this message. A client that lost its connection before the
   * echo resends with the same id after reconnecting; the server stores it only once.
   */
  client_id: z.string().min(1).max(64).optional(),
});
export type TClientMessage = z.infer<typeof ZClientMessage>;

/**
 * Additive: stops the answer being written to the human message `reply_to` (without it, whichever
 * answer of this user's channel is being written). The part written so far is kept, marked
 * `stopped`. A stop for an answer that already ended, or is not the user's, does nothing.
 */
export const ZStopRequest = z.object({
  message_type: z.literal('stop'),
  reply_to: z.number().int().optional(),
});
export type TStopRequest = z.infer<typeof ZStopRequest>;

/**
 * Additive: answers the user's human message `reply_to` again (Regenerate, or Retry after a failed
 * answer). The new answer comes after everything else, carrying the same reply_to; earlier answers
 * stay. It waits its turn like a message (`queued`).
 */
export const ZRegenerateRequest = z.object({
  message_type: z.literal('regenerate'),
  reply_to: z.number().int().positive(),
});
export type TRegenerateRequest = z.infer<typeof ZRegenerateRequest>;

/**
 * Additive: cancels the user's research `id` (asked for in the chat) while it waits or runs. Every
 * tab then gets its card as cancelled, and the chat a note. One that ended, or is not theirs, is left as it is.
 */
export const ZCancelResearchRequest = z.object({
  message_type: z.literal('cancel_research'),
  id: z.number().int().positive().max(MAX_ROW_ID),
});

/**
 * Additive: asks whether the connection still carries frames (browsers cannot see WebSocket pings).
 * The server answers `pong` at once; it costs nothing of the user's message budget.
 */
export const ZPingRequest = z.object({ message_type: z.literal('ping') });

/** Everything a client sends. */
export const ZClientEvent = z.discriminatedUnion('message_type', [
  ZClientMessage,
  ZStopRequest,
  ZRegenerateRequest,
  ZCancelResearchRequest,
  ZPingRequest,
]);
export type TClientEvent = z.infer<typeof ZClientEvent>;

// ---- HTTP: older history ----

/** GET /api/chat/messages/?before=<message_id>&limit=<n>&channel=chat|onboarding */
export const ZChatHistoryQuery = z.object({
  before: ZRowId.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(CHAT_HISTORY_SIZE),
  channel: ZChatChannel.default('chat'),
});

export const ZChatHistoryPage = z.object({ results: z.array(ZChatMessage), has_more: z.boolean() });
export type TChatHistoryPage = z.infer<typeof ZChatHistoryPage>;

/** The body of a research_report message (raw_text is this, as JSON). */
export const ZResearchReport = z.object({
  /** Additive: the research's id; the message links to /resources/research/{id}. */
  id: z.number().int().optional(),
  query: z.string().optional(),
  /** Additive: ISO 8601. */
  created: z.string().optional(),
  introduction: z.string().optional(),
  report: z.string(),
  conclusion: z.string().optional(),
  sources: z.array(z.object({ url: z.string(), title: z.string().optional() })).default([]),
});
export type TResearchReport = z.infer<typeof ZResearchReport>;
