// The operator's check of the configured model (npm run check-model, and the admin page): one
// probe of each capability Daybook uses, what it will use, and what could be changed on the model
// server. It talks to the endpoint exactly as the app does (the same client), so what it reports
// is what users get.
import type { TModelCheck, TModelCheckItem } from '@daybook/contracts';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { endpointForLog, INSTEAD } from './model.capabilities.ts';
import { createLlm } from './model.client.ts';
import { failureKind, ModelOutputError } from './model.errors.ts';
import type { Capability, Llm, LlmReasoning, LlmUsage, StructuredMode } from './model.types.ts';

const CLOCK_TOOL = {
  name: 'get_current_time',
  description: 'The current time.',
  parameters: { type: 'object', properties: {} },
};

/** What the operator can change, from what the server said. */
export function adviceFor(capability: Capability, reason: string): string | null {
  if (/jinja/i.test(reason))
    return 'llama.cpp: start llama-server with --jinja (and a model whose chat template supports tools).';
  if (/enable-auto-tool-choice/i.test(reason))
    return 'vLLM: start it with --enable-auto-tool-choice --tool-call-parser <parser> (hermes for Qwen, llama3_json for Llama 3.1+, mistral for Mistral models).';
  if (/does not support tools/i.test(reason))
    return "Ollama: this model cannot call tools; choose one with the 'tools' tag on ollama.com (for example qwen3, llama3.1 or mistral-nemo).";
  if (/cannot use tools with stream/i.test(reason)) return 'llama.cpp: this build cannot stream tool calls; update it.';
  switch (capability) {
    case 'namedToolChoice':
      return 'The server ignores or refuses a forced tool_choice (Ollama and llama.cpp do): nothing to change; Daybook asks for JSON instead.';
    case 'jsonSchema':
      return 'llama.cpp, vLLM, LM Studio and Ollama 0.5+ constrain answers to a JSON schema (response_format), which is more reliable than instructions.';
    case 'thinkWithoutOpening':
      return "Enable the server's reasoning parser so answers stream at once (vLLM: --reasoning-parser deepseek_r1 or qwen3; llama.cpp: --reasoning-format deepseek).";
    default:
      return null;
  }
}

const item = (name: string, status: TModelCheckItem['status'], detail: string, advice: string | null = null) => ({
  name,
  status,
  detail,
  advice,
});

/** Why the endpoint could not be used at all, for the operator. */
function unusable(err: unknown, endpoint: string, model: string): TModelCheckItem {
  const said = err instanceof Error ? err.message : String(err);
  switch (failureKind(err)) {
    case 'credentials':
      return item(
        'Answers',
        'failed',
        `The endpoint refused the API key: ${said}`,
        'Set LLM_API_KEY to a key for this endpoint.',
      );
    case 'not-found':
      return item(
        'Answers',
        'failed',
        `The endpoint has no model "${model}" (or no chat completions at this address): ${said}`,
        'Check LLM_MODEL (Ollama: ollama pull <model>) and that LLM_BASE_URL ends in /v1.',
      );
    case 'timeout':
      return item(
        'Answers',
        'failed',
        `No answer in time: ${said}`,
        'Check that the model is loaded; raise LLM_TIMEOUT_MS for slow hardware.',
      );
    case 'unreachable':
      return item(
        'Answers',
        'failed',
        `Could not connect to ${endpoint}: ${said}`,
        'Check LLM_BASE_URL and that the server is running.',
      );
    default:
      return item('Answers', 'failed', `The endpoint failed: ${said}`);
  }
}

async function answers(llm: Llm, signal: AbortSignal) {
  let usage: LlmUsage | null = null;
  let reasoning: LlmReasoning | null = null;
  let text = '';
  const started = Date.now();
  for await (const piece of llm.stream([{ role: 'user', content: 'Reply with the single word: ready' }], signal, {
    onUsage: (u) => {
      usage = u;
    },
    onReasoning: (r) => {
      reasoning = r;
    },
    onReset: () => {
      text = '';
    },
  }))
    text += piece;
  return { text: text.trim(), usage, reasoning, seconds: (Date.now() - started) / 1000 } as {
    text: string;
    usage: LlmUsage | null;
    reasoning: LlmReasoning | null;
    seconds: number;
  };
}

async function chatTools(llm: Llm, signal: AbortSignal): Promise<TModelCheckItem> {
  let called = false;
  try {
    for await (const _ of llm.stream(
      [{ role: 'user', content: 'What time is it? Call the get_current_time tool to find out.' }],
      signal,
      { tools: [CLOCK_TOOL], onToolCall: (c) => (called ||= c.name === CLOCK_TOOL.name) },
    )) {
      // Only the call matters.
    }
  } catch (err) {
    return item(
      'Tools in the chat',
      'failed',
      `An answer offered tools failed: ${err instanceof Error ? err.message : String(err)}. The chat fails the same way when it offers them.`,
    );
  }
  const refused = llm
    .refusals()
    .find((r) => r.capability === 'tools' || r.capability === 'autoToolChoice' || r.capability === 'streamedTools');
  if (refused)
    return item(
      'Tools in the chat',
      'degraded',
      `The server refused them: ${refused.reason}. Instead, ${INSTEAD[refused.capability]}.`,
      adviceFor(refused.capability, refused.reason),
    );
  return called
    ? item('Tools in the chat', 'ok', 'The model called a tool when asked: research and calendars work from the chat.')
    : item(
        'Tools in the chat',
        'degraded',
        'Tools were accepted, but the model answered without calling one: it may not start research or read calendars on its own (/research still works).',
      );
}

const ZProbe = z.object({ ok: z.boolean() });
const MODE_NAMES: Record<StructuredMode, string> = {
  tool: 'Forced tool call',
  json: 'JSON schema output',
  prompt: 'JSON from instructions',
};

async function structuredIn(llm: Llm, mode: StructuredMode, signal: AbortSignal): Promise<TModelCheckItem> {
  const name = MODE_NAMES[mode];
  const concerns: Capability[] = mode === 'tool' ? ['tools', 'namedToolChoice'] : mode === 'json' ? ['jsonSchema'] : [];
  try {
    await llm.structured({
      messages: [{ role: 'user', content: 'Confirm that you can answer in this format: set ok to true.' }],
      name: 'daybook_check',
      description: 'Confirms the format works.',
      parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      schema: ZProbe,
      mode,
      signal,
    });
    // It worked here, but the endpoint refused or ignored it before: the app asks another way.
    const avoided = llm.refusals().find((r) => concerns.includes(r.capability));
    if (avoided)
      return item(
        name,
        'degraded',
        `Answered this time, but not always: ${avoided.reason}. Daybook asks another way.`,
        adviceFor(avoided.capability, avoided.reason),
      );
    return item(name, 'ok', 'Answered in the format asked.');
  } catch (err) {
    const refused = llm.refusals().find((r) => concerns.includes(r.capability));
    if (refused)
      return item(name, 'degraded', `Not available: ${refused.reason}.`, adviceFor(refused.capability, refused.reason));
    if (err instanceof ModelOutputError)
      return item(name, 'degraded', `The model did not answer in the format: ${err.problem}`);
    return item(name, 'failed', err instanceof Error ? err.message : String(err));
  }
}

async function embeddings(llm: Llm, model: string, signal: AbortSignal): Promise<TModelCheckItem> {
  if (!llm.embed)
    return item('Embeddings', 'skipped', 'EMBEDDING_MODEL is not set: research ranks passages by full-text search.');
  try {
    const [a] = await llm.embed(['e-bike commuting', 'battery care'], signal);
    return item('Embeddings', 'ok', `${model} gives vectors of ${a?.length ?? 0} dimensions.`);
  } catch (err) {
    return item(
      'Embeddings',
      'failed',
      `${err instanceof Error ? err.message : String(err)} Research falls back to full-text ranking.`,
      'Check EMBEDDING_MODEL: the endpoint must serve it at /embeddings.',
    );
  }
}

/** What the first answer shows: that it came, its token counts, where its reasoning was. */
function firstAnswerChecks(llm: Llm, first: Awaited<ReturnType<typeof answers>>): TModelCheckItem[] {
  const answered = first.text
    ? item('Answers', 'ok', `Streamed "${first.text.slice(0, 40)}" in ${first.seconds.toFixed(1)} s.`)
    : item('Answers', 'degraded', 'The answer was empty.');
  const usage = first.usage
    ? item('Token usage', 'ok', `Reported (${first.usage.prompt} prompt, ${first.usage.completion} completion tokens).`)
    : item(
        'Token usage',
        'degraded',
        llm.refuses('streamUsage')
          ? `Refused stream_options: ${INSTEAD.streamUsage}.`
          : 'The server reported no token counts.',
      );
  const where = first.reasoning?.field;
  const reasoning = llm.refuses('thinkWithoutOpening')
    ? item(
        'Reasoning',
        'degraded',
        'Reasoning arrives inside the answer, ending in </think>: Daybook holds streamed answers until it ends.',
        adviceFor('thinkWithoutOpening', ''),
      )
    : where === 'think'
      ? item(
          'Reasoning',
          'degraded',
          'Reasoning arrives inside the answer as <think> tags: Daybook removes it.',
          adviceFor('thinkWithoutOpening', ''),
        )
      : item(
          'Reasoning',
          'ok',
          where ? `Reasoning arrives apart (${where}) and is kept out of answers.` : 'No reasoning in the answers.',
        );
  return [answered, usage, reasoning];
}

/** One probe of each capability against `config`'s endpoint; never throws. */
export async function checkModel(
  config: Config['llm'],
  embeddingModel?: string,
  options: { timeoutMs?: number } = {},
): Promise<TModelCheck> {
  const llm = createLlm(config, embeddingModel);
  if (!llm || !config.model)
    return {
      endpoint: null,
      model: null,
      checks: [
        item(
          'Model',
          'failed',
          'LLM_MODEL is not set: the chat answers with a note on how to configure one.',
          'Set LLM_MODEL, LLM_BASE_URL and LLM_API_KEY.',
        ),
      ],
      uses: [],
      ok: false,
    };
  const endpoint = endpointForLog(config.baseUrl ?? 'https://api.openai.com/v1');
  const model = config.model;
  const signal = AbortSignal.timeout(options.timeoutMs ?? 5 * 60_000);
  const checks: TModelCheckItem[] = [];
  let first: Awaited<ReturnType<typeof answers>>;
  try {
    first = await answers(llm, signal);
  } catch (err) {
    return { endpoint, model, checks: [unusable(err, endpoint, model)], uses: [], ok: false };
  }
  checks.push(...firstAnswerChecks(llm, first));
  checks.push(await chatTools(llm, signal));
  const modes: StructuredMode[] = ['tool', 'json', 'prompt'];
  const structured: TModelCheckItem[] = [];
  for (const mode of modes) structured.push(await structuredIn(llm, mode, signal));
  checks.push(...structured);
  checks.push(await embeddings(llm, embeddingModel ?? '', signal));

  const best = modes.find((_, i) => structured[i]?.status === 'ok');
  const chatWithTools = checks.find((c) => c.name === 'Tools in the chat')?.status === 'ok';
  const uses = [
    chatWithTools
      ? 'Chat: streamed answers with tools (research, calendars).'
      : 'Chat: streamed answers without tools; research starts with /research.',
    best
      ? `Learning, research and settings: structured answers through ${{ tool: 'a forced tool call', json: 'a JSON schema response format', prompt: 'JSON instructions in the prompt' }[best]}.`
      : 'Learning, research and settings: the model answered in no usable format; learning and research will fail.',
  ];
  return { endpoint, model, checks, uses, ok: Boolean(first.text) && Boolean(best) };
}
