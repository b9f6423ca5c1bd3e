// The model servers people run, each as its recorded framing (tests/fixtures/model-providers) and
// what it does with each request feature, as recorded or documented (sources in SOURCES.md there).
// A profile is what the replay server (server.ts) answers like; a new provider is a recording and
// a row here.
import { documentedError, type ErrorRecording, errorRecording } from './recordings.ts';

export type ReasoningStyle =
  /** Beside the content, in this field (as the recording has it). */
  | 'reasoning_content'
  | 'reasoning'
  /** `<think>…</think>` at the start of the content (R1 on Ollama before its think support). */
  | 'think'
  /** The template opened the block, so the content has only `</think>` (vLLM without a reasoning parser). */
  | 'think-no-open'
  /** LM Studio: an empty `<think>\n\n</think>` before the answer. */
  | 'empty-think'
  /** Mistral's reasoning models: thinking parts in a content array (as recorded). */
  | 'parts';

export interface Profile {
  name: string;
  /** What it stands for, for a reader of a failing test. */
  about: string;
  /** The model's name as an operator would set it (LLM_MODEL), where it matters. */
  model?: string;
  /** The recorded stream that answers in text. */
  text: string;
  /** The recorded stream that calls a tool (absent: the server cannot stream tool calls). */
  tools?: string;
  /** A recorded whole (non-streamed) answer whose framing whole answers keep. */
  whole?: string;
  reasoning?: { style: ReasoningStyle; field?: 'reasoning_content' | 'reasoning' };
  refuses?: {
    /** Any request with tools. */
    tools?: ErrorRecording;
    /** Tools with automatic tool choice (vLLM without --enable-auto-tool-choice). */
    autoTools?: ErrorRecording;
    /** Tools in a streamed request (llama.cpp --jinja before streamed tool calls). */
    streamedTools?: ErrorRecording;
    jsonSchema?: ErrorRecording;
    streamOptions?: ErrorRecording;
  };
  /** What a forced (named) tool_choice gets: the call; the model's prose; JSON in a fence. */
  forcedTool: 'call' | 'prose' | 'fenced';
  /** Whether `response_format: json_schema` constrains the answer. */
  jsonSchema: 'honoured' | 'ignored';
  /** A tool round whose assistant turn lacks reasoning_content is refused with this (DeepSeek). */
  reasoningBack?: ErrorRecording;
  /** Usage chunks: only when stream_options asks (OpenAI), or in every answer as recorded. */
  usage: 'asked' | 'always';
}

const OPENAI_TOOLS = 'openai/gpt-4.1-nano-tool-call.sse';

export const PROFILES: Profile[] = [
  {
    name: 'openai',
    about: 'OpenAI: obfuscation padding, a usage-only last chunk when asked',
    text: 'openai/gpt-4.1-nano-text.excerpt.chunks.txt',
    tools: OPENAI_TOOLS,
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'azure',
    about: 'Azure OpenAI: a first chunk without choices, content filter results, a chunk after the finish',
    text: 'azure/azure-text.chunks.txt',
    tools: OPENAI_TOOLS,
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'azure-ai-inference',
    about: 'Azure AI model inference: stream_options refused with a bare {detail} body',
    text: 'azure/azure-text.chunks.txt',
    tools: OPENAI_TOOLS,
    refuses: { streamOptions: errorRecording('azure/azure-ai-inference-stream-options-extra-parameters.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'ollama-tools',
    about: 'Ollama with a tool-capable model: role in every delta, reasoning in `reasoning`, tool_choice ignored',
    text: 'ollama/ollama-0.2-stream-tools-as-text-content.excerpt.chunks.txt',
    tools: 'groq/groq-llama-3.3-tool-call.chunks.txt',
    whole: 'ollama/ollama-0.3-llama3.1-tools-answered-in-prose.json',
    reasoning: { style: 'reasoning', field: 'reasoning' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'ollama-no-tools',
    about: 'Ollama with a model without tools: 400 "does not support tools"',
    text: 'ollama/ollama-0.2-stream-tools-as-text-content.excerpt.chunks.txt',
    whole: 'ollama/ollama-0.3-llama3.1-tools-answered-in-prose.json',
    refuses: { tools: errorRecording('ollama/ollama-v1-model-without-tools.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'ollama-prose',
    about: 'Ollama ignoring tool_choice: the forced call is answered in prose (recorded), JSON schema format honoured',
    text: 'ollama/ollama-0.2-stream-tools-as-text-content.excerpt.chunks.txt',
    tools: 'groq/groq-llama-3.3-tool-call.chunks.txt',
    whole: 'ollama/ollama-0.3-llama3.1-tools-answered-in-prose.json',
    forcedTool: 'prose',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'ollama-r1',
    model: 'deepseek-r1:8b',
    about: 'deepseek-r1 on Ollama before its think support: <think> in the content, no tools, JSON format ignored',
    text: 'ollama/ollama-0.2-stream-tools-as-text-content.excerpt.chunks.txt',
    whole: 'ollama/ollama-0.3-llama3.1-tools-answered-in-prose.json',
    reasoning: { style: 'think' },
    refuses: {
      tools: documentedError('ollama/ollama#14795 (wording of newer Ollama)', 400, {
        error: {
          message: 'registry.ollama.ai/library/deepseek-r1:8b does not support tools',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      }),
    },
    forcedTool: 'fenced',
    jsonSchema: 'ignored',
    usage: 'asked',
  },
  {
    name: 'llamacpp-jinja',
    model: 'Qwen3-4B-Thinking-2507-Q4_K_M.gguf',
    about: 'llama.cpp --jinja: reasoning_content, timings, tool_choice objects ignored (the model calls the tool)',
    text: 'llamacpp/llamacpp-b8180-qwen3-thinking-reasoning-content.excerpt.sse',
    tools: 'llamacpp/llamacpp-b8180-gemma3-jinja-tool-call.sse',
    reasoning: { style: 'reasoning_content', field: 'reasoning_content' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'llamacpp-no-jinja',
    model: 'Qwen3-4B-Thinking-2507-Q4_K_M.gguf',
    about: 'llama.cpp without --jinja: tools refused with HTTP 500',
    text: 'llamacpp/llamacpp-b8180-qwen3-thinking-reasoning-content.excerpt.sse',
    reasoning: { style: 'reasoning_content', field: 'reasoning_content' },
    refuses: { tools: errorRecording('llamacpp/llamacpp-tools-without-jinja.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'llamacpp-old-jinja',
    about: 'llama.cpp --jinja before streamed tool calls: 500 "Cannot use tools with stream"',
    text: 'llamacpp/llamacpp-b8180-qwen3-thinking-reasoning-content.excerpt.sse',
    tools: 'llamacpp/llamacpp-b8180-gemma3-jinja-tool-call.sse',
    refuses: { streamedTools: errorRecording('llamacpp/llamacpp-jinja-tools-with-stream-unsupported.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'vllm-old',
    about:
      'vLLM without --enable-auto-tool-choice, old {"object":"error"} envelope; named tool choice works, name repeated per chunk',
    text: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    tools: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    refuses: { autoTools: errorRecording('vllm/vllm-auto-tool-choice-old-envelope.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'vllm-new',
    about: 'vLLM without --enable-auto-tool-choice, new {"error":{…}} envelope',
    text: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    tools: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    refuses: {
      autoTools: documentedError(
        'vllm-project/vllm vllm/entrypoints/openai/protocol.py ErrorResponse (PR #30613)',
        400,
        {
          error: {
            message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            type: 'BadRequestError',
            param: null,
            code: 400,
          },
        },
      ),
    },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'vllm-reasoning',
    model: 'Qwen/Qwen3.5-27B',
    about: 'vLLM with a reasoning parser: `reasoning` only (0.17), or both fields (qwen3 parser)',
    text: 'vllm/vllm-qwen3-vl-thinking-reasoning-both-fields.excerpt.chunks.txt',
    tools: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    reasoning: { style: 'reasoning', field: 'reasoning' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'vllm-no-parser',
    model: 'Qwen/QwQ-32B',
    about: 'vLLM serving a thinking model without a reasoning parser: the content has </think> but no <think>',
    text: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    tools: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    reasoning: { style: 'think-no-open' },
    refuses: { autoTools: errorRecording('vllm/vllm-auto-tool-choice-old-envelope.error.json') },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'lmstudio',
    model: 'qwen/qwen3-4b',
    about: 'LM Studio with Qwen3: an empty think block in the content, the model id as fingerprint',
    text: 'lmstudio/lmstudio-0.3.17-qwen3-no-think-stream-first-chunk.excerpt.chunks.txt',
    tools: OPENAI_TOOLS,
    reasoning: { style: 'empty-think' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'deepseek-thinking',
    model: 'deepseek-reasoner',
    about: 'DeepSeek thinking mode: reasoning_content, and a tool round without it is refused',
    text: 'deepseek/deepseek-chat-text.sse',
    tools: 'deepseek/deepseek-v4-flash-tool-call.chunks.txt',
    reasoning: { style: 'reasoning_content', field: 'reasoning_content' },
    reasoningBack: errorRecording('deepseek/deepseek-v4-thinking-reasoning-content-not-passed-back.error.json'),
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'always',
  },
  {
    name: 'mistral',
    about: 'Mistral: tool calls without index (streamed) or type (whole), usage in every answer',
    text: 'mistral/ministral-3b-text.sse',
    tools: 'mistral/mistral-tool-call-no-index.chunks.txt',
    whole: 'mistral/mistral-tool-call-no-type.json',
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'always',
  },
  {
    name: 'magistral',
    model: 'magistral-medium-latest',
    about: "Mistral's reasoning models: content as an array of thinking and text parts",
    text: 'mistral/magistral-thinking-content-array.chunks.txt',
    tools: 'mistral/mistral-tool-call-no-index.chunks.txt',
    whole: 'mistral/mistral-tool-call-no-type.json',
    reasoning: { style: 'parts' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'always',
  },
  {
    name: 'groq',
    model: 'qwen/qwen3-32b',
    about: 'Groq: usage under x_groq, reasoning in `reasoning`, a whole tool call in one delta',
    text: 'groq/groq-qwen3-32b-reasoning.excerpt.chunks.txt',
    tools: 'groq/groq-llama-3.3-tool-call.chunks.txt',
    reasoning: { style: 'reasoning', field: 'reasoning' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'always',
  },
  {
    name: 'qwen',
    about: 'Alibaba DashScope: reasoning_content, tool-call pieces repeating an empty id',
    text: 'qwen/dashscope-qwen3-max-reasoning.excerpt.chunks.txt',
    tools: 'qwen/dashscope-qwen3-max-tool-call.chunks.txt',
    reasoning: { style: 'reasoning_content', field: 'reasoning_content' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'nim',
    about: 'A NIM-style gateway resending the tool name in every chunk (closest recording: vLLM v1)',
    text: 'openai/gpt-4.1-nano-text.excerpt.chunks.txt',
    tools: 'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
  {
    name: 'xai',
    about: 'xAI: reasoning_content, chunks without finish_reason keys, a whole tool call in one delta',
    text: 'xai/grok-3-mini-text.excerpt.chunks.txt',
    tools: 'xai/grok-3-mini-tool-call.excerpt.chunks.txt',
    reasoning: { style: 'reasoning_content', field: 'reasoning_content' },
    forcedTool: 'call',
    jsonSchema: 'honoured',
    usage: 'asked',
  },
];

export const profile = (name: string): Profile => {
  const found = PROFILES.find((p) => p.name === name);
  if (!found) throw new Error(`no model profile ${name}`);
  return found;
};
