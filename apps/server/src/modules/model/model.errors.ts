// Providers' errors, read the same way whatever their envelope: `{"error":{…}}` (OpenAI, llama.cpp,
// Ollama, new vLLM), `{"object":"error","message":…}` (old vLLM, Mistral, whose message may itself
// be an object), `{"error":"…"}` (LM Studio), `{"detail":…}` (FastAPI servers) or plain text. The
// refusal of a request's feature (tools, tool_choice, response_format, stream_options) is told by
// what it says, whatever the status (400, 422, 500, 501).
import type { Capability } from './model.types.ts';

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A validation problem of FastAPI or pydantic (`{loc, msg}`) as "body.tools: msg". */
const located = (d: Loose) =>
  `${Array.isArray(d.loc) ? `${d.loc.join('.')}: ` : ''}${typeof d.msg === 'string' ? d.msg : ''}`;

const words = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : Array.isArray(v)
      ? v.map((d) => (isObject(d) && typeof d.msg === 'string' ? located(d) : words(d))).join('; ')
      : isObject(v) && 'detail' in v
        ? words(v.detail)
        : v === undefined || v === null
          ? ''
          : JSON.stringify(v);

export interface ProviderError {
  message: string;
  type?: string;
  code?: string | number;
  param?: string;
}

/** The error in a provider's error body, whatever its envelope. */
export function providerError(body: string): ProviderError {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    // Plain text (or an HTML error page): its words, briefly.
    return {
      message: body
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 500),
    };
  }
  if (!isObject(json)) return { message: words(json) };
  const e = isObject(json.error) ? json.error : json;
  const message = words(
    typeof json.error === 'string' ? json.error : (e.message ?? e.detail ?? e.msg ?? json.detail ?? e),
  );
  const type = typeof e.type === 'string' ? e.type : undefined;
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? e.code : undefined;
  const param = typeof e.param === 'string' ? e.param : undefined;
  return { message, ...(type ? { type } : {}), ...(code !== undefined ? { code } : {}), ...(param ? { param } : {}) };
}

/** What a request asked for that an endpoint may refuse. */
export interface Asked {
  tools?: boolean;
  /** The request streams (some servers take tools only without streaming). */
  stream?: boolean;
  toolChoice?: 'auto' | 'named';
  jsonSchema?: boolean;
  streamUsage?: boolean;
  /** The request has a system message after the first (see model.roles.ts). */
  lateSystem?: boolean;
}

/** A chat template that takes one system message, first (Mistral, Gemma, Qwen3 templates; mistral_common). */
const LATE_SYSTEM_REFUSED =
  /roles must alternate|system (role|message|prompt)s?[^.]{0,40}(not supported|unsupported|must be|only|beginning|first)|unexpected role ['"`]?system/i;

const REFUSING_STATUSES = new Set([400, 415, 422, 500, 501]);
// Errors about the request's size or the account, which may mention a feature in passing.
const NOT_A_REFUSAL = /context|too long|too many tokens|maximum|token limit|rate limit|quota|billing/i;
const REFUSING =
  /support|require|enable|not (allowed|permitted|available|implemented|valid)|unavailable|unknown|unrecognized|unexpected|invalid|extra|forbidden|disabled|must be|only|cannot|can't/i;
/** Words that refuse the tools feature itself (not, say, a tool call's id or arguments). */
const TOOLS_REFUSED = new RegExp(
  [
    /(does not|doesn't|do not|don't|not) support(s|ed)? (tools|tool[ _-]?(use|calling|calls)|function[ _-]?calling|functions)/,
    /\btools? (param|parameter|field|is|are)? ?(is |are )?(not supported|unsupported|requires?|not enabled|disabled|not allowed|not permitted)/,
    /unsupported param(eter)?s?:? ['"`]?tools/,
    /cannot use tools/,
    /(extra|unknown|unrecognized|unexpected)[^.]{0,40}['"`]tools['"`]/,
    /\btools\b[^.]{0,20}(extra|not permitted|forbidden|unknown|unrecognized)/,
    /\b(tools?|tool[ _-]?(calling|use|calls)|function[ _-]?calling|functions?) (is |are )?(not supported|not enabled|unsupported|unavailable|disabled)/,
  ]
    .map((r) => r.source)
    .join('|'),
  'i',
);

/** The feature this error refuses, or null when it is about something else. */
export function refusalOf(status: number | undefined, message: string, asked: Asked): Capability | null {
  if (status === undefined || !REFUSING_STATUSES.has(status) || NOT_A_REFUSAL.test(message)) return null;
  if (asked.streamUsage && /stream_options|include_usage/i.test(message)) return 'streamUsage';
  if (asked.lateSystem && LATE_SYSTEM_REFUSED.test(message)) return 'lateSystem';
  if (
    asked.jsonSchema &&
    /response_format|json_schema|json schema|structured output/i.test(message) &&
    REFUSING.test(message)
  )
    return 'jsonSchema';
  if (!asked.tools) return null;
  // Tools, but not in a stream (llama.cpp --jinja before it streamed tool calls).
  if (asked.stream && /(tools?|tool calls?) (with|in|when) stream|stream(ing)? (with|and) tools/i.test(message))
    return 'streamedTools';
  if (/tool[_ ]choice/i.test(message) && REFUSING.test(message)) {
    if (/"?auto"? tool[_ ]choice/i.test(message)) return asked.toolChoice === 'named' ? null : 'autoToolChoice';
    return asked.toolChoice === 'named' ? 'namedToolChoice' : null;
  }
  return TOOLS_REFUSED.test(message) ? 'tools' : null;
}

/** The same, for an error the SDK threw. */
export function refusalIn(err: unknown, asked: Asked): Capability | null {
  const e = err as { status?: unknown; error?: unknown; message?: unknown };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const message =
    isObject(e?.error) && typeof e.error.message === 'string' ? e.error.message : String(e?.message ?? '');
  return refusalOf(status, message, asked);
}

/**
 * The provider's words of an SDK error, for the refusal log line: about the refused feature, never
 * the prompt; quoted values (which could echo what was sent) are cut short.
 */
export function reasonOf(err: unknown): string {
  const e = err as { error?: unknown; message?: unknown };
  const message =
    isObject(e?.error) && typeof e.error.message === 'string' ? e.error.message : String(e?.message ?? '');
  return message
    .replace(/(["'`])([^"'`]{40,})\1/g, (_, q: string, inside: string) => `${q}${inside.slice(0, 30)}…${q}`)
    .slice(0, 200);
}

/** Groq and others answer 400 when the model wrote a tool call they could not parse. */
export function isToolUseFailure(err: unknown): boolean {
  const e = err as { code?: unknown; error?: unknown };
  return e?.code === 'tool_use_failed' || (isObject(e?.error) && e.error.code === 'tool_use_failed');
}

/**
 * A fetch whose error responses carry `{"error":{message,type,code,param}}` whatever the server
 * sent, so the SDK's error has the provider's words; a refusal is marked not to be retried (the
 * SDK retries 500s, and llama.cpp refuses tools with a 500).
 */
export function normalizingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    let status = res.status;
    let text: string;
    if (res.ok) {
      if (!/json/i.test(res.headers.get('content-type') ?? '')) return res;
      // A 200 whose body is an error (LM Studio on a wrong path, even when a stream was asked for).
      text = await res.text();
      const failed = errorBody(text);
      if (failed === null) return new Response(text, { status, statusText: res.statusText, headers: res.headers });
      status = /unexpected endpoint|not found|no such|unknown (url|path|route)/i.test(failed) ? 404 : 502;
    } else text = await res.text().catch(() => '');
    const error = providerError(text);
    const headers = new Headers(res.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    headers.delete('content-encoding');
    if (refusalOf(status, error.message, { tools: true, jsonSchema: true, streamUsage: true }))
      headers.set('x-should-retry', 'false');
    return new Response(JSON.stringify({ error }), { status, headers });
  };
}

/** The message of a 200 body that is an error and nothing else; null for an answer. */
function errorBody(text: string): string | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(json) || 'choices' in json || 'data' in json) return null;
  if (!('error' in json) && json.object !== 'error') return null;
  return providerError(text).message;
}

/** Why a model call failed, in kinds a user's message can name. */
export type FailureKind =
  | 'timeout'
  | 'unreachable'
  | 'credentials'
  | 'not-found'
  | 'busy'
  | 'server-error'
  | 'rejected'
  | 'content-filter'
  | 'format';

/** The model answered, but never in a form Daybook could use (after every way it knows to ask). */
export class ModelOutputError extends Error {
  constructor(
    /**
     * 'format': never JSON; 'invalid': JSON, but not of the schema; 'check': of the schema, but it
     * failed the caller's check twice.
     */
    readonly kind: 'format' | 'invalid' | 'check',
    readonly problem: string,
  ) {
    super(`the model's answer was not usable: ${problem}`);
    this.name = 'ModelOutputError';
  }
}

/** A streamed answer that went quiet. */
export class ModelIdleError extends Error {
  constructor(ms: number) {
    super(`the model sent nothing for ${ms} ms`);
    this.name = 'ModelIdleError';
  }
}

export function failureKind(err: unknown): FailureKind {
  if (err instanceof ModelOutputError) return 'format';
  const e = err as { status?: unknown; name?: string; constructor?: { name?: string }; code?: unknown };
  const kind = `${e?.constructor?.name ?? ''} ${e?.name ?? ''}`;
  if (err instanceof ModelIdleError || /Timeout/i.test(kind) || e?.code === 'ETIMEDOUT') return 'timeout';
  const status = typeof e?.status === 'number' ? e.status : undefined;
  // An error sent inside a stream, or as a 200 body: the server answered, and failed.
  if (status === undefined) {
    const said = `${kind} ${(err as { message?: unknown })?.message ?? ''} ${e?.code ?? ''}`;
    return /Connection|fetch failed|ECONN|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|socket|network/i.test(said)
      ? 'unreachable'
      : 'server-error';
  }
  if (status === 401 || status === 403) return 'credentials';
  if (status === 404) return 'not-found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'busy';
  // Azure's and others' content policies: the provider will not answer this request as it is.
  const said = `${(err as { code?: unknown }).code ?? ''} ${err instanceof Error ? err.message : ''}`;
  if (status === 400 && /content_filter|content (management )?polic|content filter/i.test(said))
    return 'content-filter';
  if (status >= 500) return status === 504 ? 'timeout' : 'server-error';
  return 'rejected';
}

/** Whether a later attempt may succeed (the network, a busy or failing server). */
export const transient = (kind: FailureKind) =>
  kind === 'timeout' || kind === 'unreachable' || kind === 'busy' || kind === 'server-error';

/**
 * What a failed model call may log above debug: its kind and status. The provider's error text can
 * echo the prompt (the user's messages and memories), so it is never included.
 */
export function modelFailure(err: unknown): { error: string; status?: number; code?: string; kind: FailureKind } {
  const e = err as { name?: unknown; constructor?: { name?: string }; status?: unknown; code?: unknown };
  const name = err instanceof Error ? e.constructor?.name || err.name : typeof err;
  return {
    error: name,
    kind: failureKind(err),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  };
}

/** The user's allowance of the day is spent. */
export class UsageLimitError extends Error {
  constructor(readonly limit: number) {
    super(
      `You have used today's allowance of the assistant (${limit.toLocaleString('en')} tokens). It renews at midnight UTC.`,
    );
    this.name = 'UsageLimitError';
  }
}
