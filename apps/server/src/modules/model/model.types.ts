// What Daybook asks of a model and gets back, whatever OpenAI-compatible server answers.
import type { z } from 'zod';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A tool call the model made, as it goes back to the model with the tool's result. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The model's reasoning in one round, and the field it came in. Some providers (DeepSeek's thinking
 * mode) require it back, in that field, with the round's tool calls; reasoning from `<think>` tags
 * or content parts is never sent back.
 */
export interface LlmReasoning {
  field: 'reasoning_content' | 'reasoning' | 'think' | 'parts';
  text: string;
}

/** The conversation of an answer that used tools: the model's calls, then each result. */
export type LlmTurnMessage =
  | LlmMessage
  | { role: 'assistant'; content: string | null; tool_calls: LlmToolCall[]; reasoning?: LlmReasoning }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface LlmTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** What a caller gives a model call beside its prompt: its usage, whose work it is, a wait to show. */
export interface ModelAsk {
  onUsage?: (usage: LlmUsage) => void;
  userId?: number;
  onWait?: (waiting: boolean) => void;
}

/** Tokens a call spent, as the endpoint reports them. */
export interface LlmUsage {
  prompt: number;
  completion: number;
  /** Prompt tokens the provider served from its cache, when it says. */
  cached?: number;
}

export interface StreamOptions {
  /** Tools the model may call while it answers; models that cannot call tools answer without them. */
  tools?: LlmTool[];
  /** The prompt to send instead when the endpoint cannot take tools (it must not promise them). */
  withoutTools?: () => LlmTurnMessage[];
  /** Each tool call of the answer, once it is complete. */
  onToolCall?: (call: LlmToolCall) => void;
  /** The tokens the answer spent, when the endpoint reports them (asked for only when this is set). */
  onUsage?: (usage: LlmUsage) => void;
  /** The round's reasoning, once it has ended (never part of the answer). */
  onReasoning?: (reasoning: LlmReasoning) => void;
  /**
   * The text streamed so far was reasoning after all (a `</think>` came without its opening tag):
   * the caller drops it. Called at most once, before the answer's first real piece.
   */
  onReset?: () => void;
  /** Whose answer this is: the model's queue is fair between users (model.gate.ts). */
  userId?: number;
  /** The model is busy: the call waits its turn (true after a second of it, false when its turn came). */
  onWait?: (waiting: boolean) => void;
}

/** A forced, structured answer: the model fills in `parameters` (JSON schema), `schema` checks it. */
export interface StructuredRequest<T> {
  messages: LlmMessage[];
  name: string;
  description: string;
  /** What the model is shown: a JSON schema. */
  parameters: Record<string, unknown>;
  /** What Daybook accepts: parsed with this (it may be more lenient than `parameters`). */
  schema: z.ZodType<T>;
  /** A further check of a parsed answer; a problem (in words for the model) asks it once more. */
  check?: (value: T) => string | null;
  signal?: AbortSignal;
  onUsage?: (usage: LlmUsage) => void;
  /** Ask only this way (the operator's check tries each); default: the best the endpoint takes. */
  mode?: StructuredMode;
  /** The way the accepted answer was asked for. */
  onMode?: (mode: StructuredMode) => void;
  /** Whose work this is: the model's queue is fair between users (model.gate.ts). */
  userId?: number;
  /** The model is busy: the call waits its turn (true after a second of it, false when its turn came). */
  onWait?: (waiting: boolean) => void;
}

/** How structured answers are asked for, most reliable first. */
export type StructuredMode = 'tool' | 'json' | 'prompt';

/** What an endpoint was found to refuse or ignore (remembered per endpoint and model). */
export type Capability =
  | 'tools'
  | 'autoToolChoice'
  | 'streamedTools'
  | 'namedToolChoice'
  | 'jsonSchema'
  | 'streamUsage'
  | 'thinkWithoutOpening'
  | 'lateSystem';

export interface Llm {
  model: string;
  /** The reply's text, piece by piece, as the model generates it; reasoning is never part of it. */
  stream(messages: LlmTurnMessage[], signal?: AbortSignal, options?: StreamOptions): AsyncIterable<string>;
  /**
   * A structured answer, validated: through a forced tool call, a JSON schema response format or
   * plain instructions, whichever the endpoint supports. Throws ModelOutputError when the model
   * answered but never in a usable form; transport errors as they come.
   */
  structured<T>(request: StructuredRequest<T>): Promise<T>;
  /** Whether the endpoint is known to refuse tools (then the chat offers none). */
  refuses(capability: Capability): boolean;
  /** What the endpoint was found to refuse, and the provider's reason (for the operator's check). */
  refusals(): Array<{ capability: Capability; reason: string }>;
  /** Vectors for texts, when an embedding model is configured (EMBEDDING_MODEL). */
  embed?: (texts: string[], signal?: AbortSignal) => Promise<number[][]>;
}
