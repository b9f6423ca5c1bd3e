// What one endpoint and model was found to refuse or ignore, remembered so later calls do not pay
// for a failed request, and said once in the log with the provider's reason and what Daybook does
// instead. Remembered for an hour: an operator who restarts the model server with other flags is
// found out without restarting Daybook.
import type { Capability } from './model.types.ts';

const FORGET_AFTER_MS = 60 * 60_000;

/** What Daybook does without each capability, for the operator reading the log. */
export const INSTEAD: Record<Capability, string> = {
  tools: 'the chat answers without tools (research starts with /research), and structured answers use JSON',
  autoToolChoice: 'the chat answers without tools (research starts with /research)',
  streamedTools: 'the chat answers without tools (research starts with /research)',
  namedToolChoice: 'structured answers (learning, research, settings) use a JSON response format or JSON instructions',
  jsonSchema: 'structured answers use JSON instructions in the prompt',
  streamUsage: 'token counts of streamed answers are not reported',
  thinkWithoutOpening: 'streamed answers are held back until the reasoning ends',
  lateSystem: "the chat's notes for each turn go at the head of the user's message (its prompt is cached less well)",
};

const WHAT: Record<Capability, string> = {
  tools: 'refused tools',
  autoToolChoice: 'refused tools with automatic tool choice',
  streamedTools: 'refused tools in streamed answers',
  namedToolChoice: 'ignored or refused a forced tool call',
  jsonSchema: 'ignored or refused a JSON schema response format',
  streamUsage: 'refused stream_options (usage of streamed answers)',
  thinkWithoutOpening: 'sends reasoning ending in </think> without an opening tag',
  lateSystem: 'refused a system message after the first',
};

export interface CapabilityLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface Capabilities {
  refuses(capability: Capability): boolean;
  /** Remembers a refusal and logs it once (again only after it was forgotten). */
  refuse(capability: Capability, reason: string): void;
  /** What is remembered now, with the reason, for the operator's check. */
  known(): Array<{ capability: Capability; reason: string }>;
}

export function createCapabilities(options: {
  endpoint: string;
  model: string;
  log?: CapabilityLog;
  now?: () => number;
}): Capabilities {
  const now = options.now ?? Date.now;
  const refused = new Map<Capability, { at: number; reason: string }>();
  const live = (capability: Capability) => {
    const at = refused.get(capability)?.at;
    if (at === undefined) return false;
    if (now() - at < FORGET_AFTER_MS) return true;
    refused.delete(capability);
    return false;
  };
  return {
    refuses: live,
    refuse(capability, reason) {
      if (live(capability)) return;
      refused.set(capability, { at: now(), reason });
      options.log?.warn(
        { endpoint: options.endpoint, model: options.model, refused: capability, reason, instead: INSTEAD[capability] },
        `The model endpoint ${WHAT[capability]}: ${INSTEAD[capability]}`,
      );
    },
    known: () =>
      [...refused.entries()].filter(([c]) => live(c)).map(([capability, { reason }]) => ({ capability, reason })),
  };
}

/** An endpoint as it may be logged: scheme, host and path, never credentials or a query. */
export function endpointForLog(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}
