// What a sensible model would answer to each of Daybook's calls, decided from the request alone:
// the profiles (profiles.ts) then say it in their providers' framing. The content is chosen so
// that what a user sees proves the call worked (a memory learned, a report citing the pages read,
// calendar events named after a tool round).

export interface Request {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[]; [k: string]: unknown }>;
  tools?: Array<{ type: string; function: { name: string } }>;
  tool_choice?: unknown;
  response_format?: { type: string; json_schema?: { name?: string } };
  stream_options?: unknown;
}

export type Answer = { text: string } | { toolCall: { name: string; arguments: string } } | { json: unknown };

/** A message's text, whether its content is a string or a list of parts. */
export const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p) => (typeof p === 'object' && p && 'text' in p ? String(p.text) : '')).join('')
      : '';

/** The structured answer a request asks for: by its forced tool, its response format, or its instructions. */
export function structuredName(req: Request): string | undefined {
  const named = req.tool_choice as { function?: { name?: string } } | undefined;
  if (named?.function?.name) return named.function.name;
  if (req.response_format?.json_schema?.name) return req.response_format.json_schema.name;
  if (!req.stream && req.tools?.length === 1) return req.tools[0]?.function.name;
  const system = textOf(req.messages[0]?.content);
  return system.match(/Answer with only a JSON object[^"]*for "([a-z_]+)"/)?.[1];
}

export const DAILY_TEXT = 'Good morning! Here is your day.\n\n### Today\n\nA calm day ahead.';
export const ONBOARDED = 'Thanks, that is all I need. You can now chat freely.';
const ONBOARDING_MARKER = '[[ONBOARDING_COMPLETE]]';
export const chatAnswer = (said: string) => `You said: ${said}`;

/** What the model says, for the call `req` makes. */
export function answer(req: Request): Answer {
  const name = structuredName(req);
  if (name) return { json: structured(name, req) };
  const system = textOf(req.messages[0]?.content);
  if (system.includes("writing the user's daily message")) return { text: DAILY_TEXT };
  if (system.includes('meeting a new user for the first time')) return { text: `${ONBOARDED}\n${ONBOARDING_MARKER}` };
  const last = req.messages.at(-1);
  if (last?.role === 'tool') {
    const day = JSON.parse(textOf(last.content)) as { events?: Array<{ title: string }> };
    return { text: `On your calendar: ${(day.events ?? []).map((e) => e.title).join(', ') || 'nothing'}.` };
  }
  const said = textOf([...req.messages].reverse().find((m) => m.role === 'user')?.content);
  const offered = (req.tools ?? []).map((t) => t.function.name);
  const named = said.match(/Call the ([a-z_]+) tool/)?.[1];
  if (named && offered.includes(named)) return { toolCall: { name: named, arguments: '{}' } };
  if (offered.includes('calendar_events') && /calendar/i.test(said))
    return { toolCall: { name: 'calendar_events', arguments: '{}' } };
  if (offered.includes('web_research') && /^look up (.+)/i.test(said))
    return { toolCall: { name: 'web_research', arguments: JSON.stringify({ query: said.replace(/^look up /i, '') }) } };
  return { text: chatAnswer(said) };
}

function structured(name: string, req: Request): unknown {
  const prompt = req.messages.map((m) => textOf(m.content)).join('\n');
  switch (name) {
    case 'save_memory_changes': {
      const message = prompt.split("The user's latest message:\n")[1] ?? '';
      const liked = message.match(/I (?:love|like|enjoy) ([a-z ]+)/i)?.[1]?.trim();
      const home = message.match(/I live in ([A-Z][a-z]+)/)?.[1];
      const add = (key: string, data: string, memory_type: string) => ({
        action: 'ADD',
        id: null,
        key,
        data,
        memory_type,
        frequency_description: null,
      });
      return {
        operations: [
          ...(liked ? [add(liked, `Loves ${liked}`, 'interest')] : []),
          ...(home ? [add('home city', `Lives in ${home}`, 'location')] : []),
        ],
      };
    }
    case 'plan_research':
      return { queries: ['e-bike commuting tips', 'e-bike battery care'] };
    case 'write_report': {
      const urls = [...prompt.matchAll(/^URL: (.+)$/gm)].map((m) => m[1] as string);
      return {
        introduction: 'Commuting by e-bike is growing [1].',
        body: `### Findings\n\n${urls.map((_, i) => `- Finding ${i + 1} [${i + 1}]`).join('\n')}`,
        conclusion: 'Ride on [1].',
        sources: urls.map((url, i) => ({ url, title: `Source ${i + 1}` })),
      };
    }
    case 'daybook_check':
      return { ok: true };
    case 'daily_settings':
      return /lisbon/i.test(prompt)
        ? { city: 'Lisbon, Portugal', time_zone: 'Europe/Lisbon', delivery_time: '07:30' }
        : {};
    default:
      return {};
  }
}
