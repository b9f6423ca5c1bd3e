// What the model sees: a persona, the current date and time, what Daybook knows about the user and
// the recent conversation, each held to a token budget so the prompt stays bounded as data grows.
import type { MemoryRow } from '../memories/memories.repo.ts';
import type { LlmMessage } from './llm.ts';

export const BUDGET = { memories: 1200, conversation: 3000 } as const;
export const ONBOARDING_DONE = '[[ONBOARDING_COMPLETE]]';

/** A cheap, stable token estimate (about four characters per token for English). */
export const tokens = (text: string) => Math.ceil(text.length / 4);

const PERSONA = `You are Daybook, a personal assistant. You are warm, direct and concise. You remember what the user tells you about themselves (their interests, routines, people and places) and use it to help. Answer in Markdown. Never invent facts about the user.`;

const ONBOARDING = `You are Daybook, meeting a new user for the first time. Interview them in a friendly way, one short question at a time, to learn: what to call them; where they live and their time zone; topics they want to follow; their regular activities (and how often); and when they would like their daily message. Acknowledge each answer briefly. When you have learned enough, or when the user asks to stop, thank them, say they can now chat freely, and end your message with the line ${ONBOARDING_DONE}`;

export interface PromptInput {
  onboarding: boolean;
  now: Date;
  timeZone: string;
  memories: MemoryRow[];
  /** Oldest first; the last one is the message being answered. */
  conversation: Array<{ authorType: string; rawText: string }>;
}

function formatNow(now: Date, timeZone: string) {
  return new Intl.DateTimeFormat('en-GB', { dateStyle: 'full', timeStyle: 'short', timeZone }).format(now);
}

/** The memory lines that fit the budget, in the order given (most important first). */
function memoryLines(memories: MemoryRow[]) {
  const lines: string[] = [];
  let used = 0;
  for (const m of memories) {
    const extra = [m.memoryType !== 'text' ? m.memoryType : '', m.frequencyDescription ?? '']
      .filter(Boolean)
      .join(', ');
    const line = `- ${m.key}: ${m.data.length > 400 ? `${m.data.slice(0, 400)}…` : m.data}${extra ? ` (${extra})` : ''}`;
    if (used + tokens(line) > BUDGET.memories) break;
    lines.push(line);
    used += tokens(line);
  }
  return lines;
}

export function buildPrompt(input: PromptInput): LlmMessage[] {
  const known = memoryLines(input.memories);
  const system = [
    input.onboarding ? ONBOARDING : PERSONA,
    `Current date and time for the user: ${formatNow(input.now, input.timeZone)} (${input.timeZone}).`,
    known.length
      ? `What you know about the user:\n${known.join('\n')}`
      : 'You do not know anything about the user yet.',
  ].join('\n\n');

  // The newest messages that fit, kept in order.
  const window: LlmMessage[] = [];
  let used = 0;
  for (const m of [...input.conversation].reverse()) {
    if (m.authorType === 'system') continue;
    const cost = tokens(m.rawText);
    if (window.length && used + cost > BUDGET.conversation) break;
    window.unshift({ role: m.authorType === 'assistant' ? 'assistant' : 'user', content: m.rawText });
    used += cost;
  }
  return [{ role: 'system', content: system }, ...window];
}

/** The user's IANA time zone from their memories, when one is known and valid. */
export function timeZoneOf(memories: MemoryRow[]): string {
  for (const m of memories) {
    if (!/time ?zone/i.test(m.key)) continue;
    const candidate = m.data.trim().split(/\s+/)[0] ?? '';
    try {
      new Intl.DateTimeFormat('en', { timeZone: candidate });
      return candidate;
    } catch {
      // Not a zone name; keep looking.
    }
  }
  return 'UTC';
}
