// The model's answer over tool rounds: each round streams into the answer; calendar reads go back to
// the model for another round, research requests are gathered for the caller to start once.
import { withoutNul } from '../../lib/text.ts';
import type { Llm, LlmReasoning, LlmTool, LlmToolCall, LlmTurnMessage } from '../model/model.types.ts';
import type { AnswerStream } from './chat.stream.ts';
import { CALENDAR_EVENTS_TOOL, WEB_RESEARCH_TOOL } from './chat.tools.ts';

/** Tool rounds in one answer: the model reads a day or two, then answers. */
const MAX_TOOL_ROUNDS = 3;

/**
 * Streams the model's answer to `messages` into `answer`, round after round while it reads calendars.
 * Returns the research topics it asked for; throws what the model throws. An aborted `signal` ends
 * it between rounds (the model's stream ends itself).
 */
export async function answerWithTools(
  model: Llm,
  answer: AnswerStream,
  turnOf: {
    messages: LlmTurnMessage[];
    /** The prompt that promises no tools, for an endpoint that refuses them. */
    withoutTools: () => LlmTurnMessage[];
    tools: LlmTool[];
    signal: AbortSignal;
    /** Whose answer it is (the model's queue is fair between users). */
    userId?: number;
    /** The calendar_events tool's result; without it, calendar calls end the answer. */
    readCalendar?: (call: LlmToolCall) => Promise<string>;
  },
): Promise<string[]> {
  const { messages, withoutTools, tools, signal, readCalendar, userId } = turnOf;
  const asked: string[] = [];
  let reads: LlmToolCall[] = [];
  const onToolCall = (call: LlmToolCall) => {
    if (call.name === CALENDAR_EVENTS_TOOL.name) {
      reads.push(call);
      return;
    }
    if (call.name !== WEB_RESEARCH_TOOL.name) return;
    try {
      const { query } = JSON.parse(call.arguments) as { query?: unknown };
      if (typeof query === 'string' && query.trim()) asked.push(withoutNul(query));
    } catch {
      // Arguments that are not JSON: the model's text answers alone.
    }
  };
  let turn: LlmTurnMessage[] = messages;
  for (let round = 0; ; round++) {
    const before = answer.text;
    reads = [];
    let reasoning: LlmReasoning | undefined;
    // The last round offers no tools, so the model has to answer.
    const offered = round < MAX_TOOL_ROUNDS - 1 ? tools : [];
    if (signal.aborted) break;
    const options = {
      tools: offered,
      onToolCall,
      withoutTools: round === 0 ? withoutTools : undefined,
      onReasoning: (r: LlmReasoning) => {
        reasoning = r;
      },
      onReset: () => answer.reset(before),
      userId,
    };
    for await (const delta of model.stream(turn, signal, options)) answer.add(delta);
    if (!reads.length || !readCalendar) break;
    const results = await Promise.all(reads.map((call) => readCalendar(call)));
    turn = [
      ...turn,
      { role: 'assistant', content: answer.text.slice(before.length) || null, tool_calls: reads, reasoning },
      ...reads.map((call, i) => ({ role: 'tool' as const, tool_call_id: call.id, content: results[i] ?? '' })),
    ];
    answer.continues();
  }
  return asked;
}
