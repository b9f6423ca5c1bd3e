// A streamed answer: the request (dropping what the endpoint refuses), then its chunks read through
// the dialect reader, reasoning kept apart, and a watch for a model that goes quiet.
import type OpenAI from 'openai';
import { withoutNul } from '../../lib/text.ts';
import type { Capabilities } from './model.capabilities.ts';
import { readChunk, ThinkSplitter, ToolCallAssembler } from './model.dialect.ts';
import { isToolUseFailure, ModelIdleError, reasonOf, refusalIn } from './model.errors.ts';
import { foldLateSystem, hasLateSystem } from './model.roles.ts';
import type { LlmReasoning, LlmTurnMessage, LlmUsage, StreamOptions } from './model.types.ts';

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Stream = AsyncIterable<unknown> & { controller: AbortController };

export interface StreamDeps {
  client: OpenAI;
  model: string;
  caps: Capabilities;
  timeoutMs: number;
  toOpenAI: (m: LlmTurnMessage) => Param;
  jsonWithoutNul: (text: string) => string;
  /** The model may write reasoning that ends in `</think>` without opening it (see REASONING_MODEL). */
  mayThink: boolean;
}

/** What the request may carry, given what the endpoint is known to refuse. */
interface Asking {
  tools: boolean;
  usage: boolean;
  /** System messages may come after the first (else they are folded, see model.roles.ts). */
  lateSystem: boolean;
}

async function open(
  deps: StreamDeps,
  messages: LlmTurnMessage[],
  options: StreamOptions,
  asking: Asking,
  signal?: AbortSignal,
): Promise<Stream> {
  const { client, model, caps } = deps;
  const offered = options.tools ?? [];
  // Each refused option is dropped, then the request is sent again without it.
  for (;;) {
    const chosen = offered.length && !asking.tools ? (options.withoutTools?.() ?? messages) : messages;
    const late = hasLateSystem(chosen);
    const prompt = late && !asking.lateSystem ? foldLateSystem(chosen) : chosen;
    try {
      return (await client.chat.completions.create(
        {
          model,
          messages: prompt.map(deps.toOpenAI),
          stream: true,
          ...(asking.tools ? { tools: offered.map((fn) => ({ type: 'function' as const, function: fn })) } : {}),
          ...(asking.usage ? { stream_options: { include_usage: true } } : {}),
        },
        { signal },
      )) as unknown as Stream;
    } catch (err) {
      const refused = refusalIn(err, {
        tools: asking.tools,
        stream: true,
        toolChoice: asking.tools ? 'auto' : undefined,
        streamUsage: asking.usage,
        lateSystem: late && asking.lateSystem,
      });
      if (refused === 'tools' || refused === 'autoToolChoice' || refused === 'streamedTools') asking.tools = false;
      else if (refused === 'streamUsage') asking.usage = false;
      else if (refused === 'lateSystem') asking.lateSystem = false;
      else if (asking.tools && isToolUseFailure(err)) {
        // The model wrote a tool call its server could not read: this answer goes without tools.
        asking.tools = false;
        continue;
      } else throw err;
      caps.refuse(refused, reasonOf(err));
    }
  }
}

/** Whether the chat's streamed answers can carry tools on this endpoint. */
export const refusesChatTools = (caps: Pick<Capabilities, 'refuses'>) =>
  caps.refuses('tools') || caps.refuses('autoToolChoice') || caps.refuses('streamedTools');

export async function* streamAnswer(
  deps: StreamDeps,
  messages: LlmTurnMessage[],
  signal: AbortSignal | undefined,
  options: StreamOptions,
): AsyncGenerator<string> {
  const { caps } = deps;
  const asking: Asking = {
    tools: Boolean(options.tools?.length) && !refusesChatTools(caps),
    usage: Boolean(options.onUsage) && !caps.refuses('streamUsage'),
    lateSystem: !caps.refuses('lateSystem'),
  };
  for (;;) {
    const stream = await open(deps, messages, options, asking, signal);
    let given = false;
    try {
      for await (const piece of read(deps, stream, options, signal)) {
        given = true;
        yield piece;
      }
      return;
    } catch (err) {
      // Groq says so inside the stream: with nothing given out yet, the answer starts again without tools.
      if (!asking.tools || given || !isToolUseFailure(err)) throw err;
      asking.tools = false;
    }
  }
}

async function* read(
  deps: StreamDeps,
  stream: Stream,
  options: StreamOptions,
  signal: AbortSignal | undefined,
): AsyncGenerator<string> {
  const { caps } = deps;
  // The SDK's timeout ends when the reply starts; a model that then goes quiet is cut off here.
  let idle = false;
  let timer: NodeJS.Timeout | undefined;
  const watch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      stream.controller.abort();
    }, deps.timeoutMs);
  };
  watch();
  const calls = new ToolCallAssembler();
  const splitter = new ThinkSplitter(deps.mayThink || caps.refuses('thinkWithoutOpening'));
  let reasoning: LlmReasoning | null = null;
  let usage: LlmUsage | null = null;
  const keep = (field: LlmReasoning['field'], text: string) => {
    if (!text) return;
    if (reasoning) reasoning.text += text;
    else reasoning = { field, text };
  };
  try {
    for await (const chunk of stream) {
      watch();
      const read = readChunk(chunk);
      if (read.error) throw Object.assign(new Error(read.error), { name: 'ProviderError' });
      // Servers that send usage in every chunk send the running total: the last one counts.
      usage = read.usage ?? usage;
      let released = '';
      if (read.reasoning) {
        keep(read.reasoning.field, read.reasoning.text);
        released = splitter.stopHolding().text;
      }
      calls.add(read.toolCalls);
      const split = splitter.push(read.text);
      // A lone </think> in the same chunk makes what was just released reasoning too.
      if (!split.reset) split.text = released + split.text;
      if (split.reset) {
        caps.refuse('thinkWithoutOpening', 'a </think> came without <think>');
        options.onReset?.();
      }
      keep('think', split.reasoning);
      const text = withoutNul(split.text);
      if (text) yield text;
    }
  } finally {
    clearTimeout(timer);
  }
  if (idle) throw new ModelIdleError(deps.timeoutMs);
  // Stopped: the SDK ends the stream quietly, and what was held back (reasoning, perhaps) and
  // half-written tool calls are not the answer.
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
  const rest = splitter.end();
  keep('think', rest.reasoning);
  if (rest.text) yield withoutNul(rest.text);
  if (usage) options.onUsage?.(usage);
  if (reasoning) options.onReasoning?.(reasoning);
  for (const call of calls.done()) options.onToolCall?.({ ...call, arguments: deps.jsonWithoutNul(call.arguments) });
}
