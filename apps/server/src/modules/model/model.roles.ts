// Prompts put what changes every turn in a system message late in the conversation (see
// assistant/prompt.ts). Some chat templates take a single system message, first: Mistral's "After
// the optional system message, conversation roles must alternate…", Gemma's "System role not
// supported", Qwen3's "System message must be at the beginning". For those, each later system
// message goes at the head of the user message after it, marked as context rather than the user's words.
import type { LlmTurnMessage } from './model.types.ts';

/** Whether the messages have a system message anywhere but first. */
export const hasLateSystem = (messages: LlmTurnMessage[]) => messages.some((m, i) => i > 0 && m.role === 'system');

/** The messages with each system message after the first folded into the next user message (or the first). */
export function foldLateSystem(messages: LlmTurnMessage[]): LlmTurnMessage[] {
  const out: LlmTurnMessage[] = [];
  let notes: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (i > 0 && m.role === 'system') {
      notes.push(m.content);
      continue;
    }
    if (m.role === 'user' && notes.length) {
      out.push({ role: 'user', content: `<context>\n${notes.join('\n\n')}\n</context>\n\n${m.content}` });
      notes = [];
      continue;
    }
    out.push(m);
  }
  // Notes with no user message after them join the first system message (or open the conversation).
  if (notes.length) {
    const first = out[0];
    if (first?.role === 'system') out[0] = { role: 'system', content: `${first.content}\n\n${notes.join('\n\n')}` };
    else out.unshift({ role: 'system', content: notes.join('\n\n') });
  }
  return out;
}
