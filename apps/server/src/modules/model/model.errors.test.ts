// Providers' errors read the same whatever their envelope, and refusals told apart from other
// errors by what they say (recorded bodies are replayed in model.recordings.test.ts).
import { describe, expect, it } from 'vitest';
import { failureKind, ModelIdleError, ModelOutputError, providerError, refusalOf } from './model.errors.ts';

describe('providerError', () => {
  it('reads every envelope as words', () => {
    expect(providerError('{"error":{"message":"m1","type":"t","code":400}}')).toEqual({
      message: 'm1',
      type: 't',
      code: 400,
    });
    expect(
      providerError('{"object":"error","message":"m2","type":"BadRequestError","param":null,"code":400}'),
    ).toMatchObject({ message: 'm2', type: 'BadRequestError' });
    expect(providerError('{"error":"plain string"}').message).toBe('plain string');
    expect(providerError('{"detail":"from FastAPI"}').message).toBe('from FastAPI');
    expect(
      providerError('{"detail":[{"loc":["body","tools"],"msg":"extra fields not permitted","type":"x"}]}').message,
    ).toBe('body.tools: extra fields not permitted');
    expect(providerError('Bad Request: tools are not supported\n').message).toBe(
      'Bad Request: tools are not supported',
    );
    expect(providerError('<html><body><h1>502 Bad Gateway</h1></body></html>').message).toBe('502 Bad Gateway');
  });
});

describe('refusalOf', () => {
  const tools = { tools: true, toolChoice: 'auto' as const };
  it.each([
    [400, 'registry.ollama.ai/library/gemma:2b does not support tools', 'tools'],
    [500, 'tools param requires --jinja flag', 'tools'],
    [400, 'Bad Request: tools are not supported', 'tools'],
    [422, 'body.tools: extra fields not permitted', 'tools'],
    [400, "Unrecognized request argument supplied: 'tools'", 'tools'],
    [400, 'This model does not support function calling', 'tools'],
    [400, 'Tool calling is not supported for this model', 'tools'],
    [400, 'function calling is not supported by this model', 'tools'],
    [400, 'tool use is not supported for this model', 'tools'],
    [400, 'Function calling is not enabled for models/gemma-3-27b-it', 'tools'],
    [400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', 'autoToolChoice'],
  ])('%i %s: %s', (status, message, capability) => {
    expect(refusalOf(status, message, tools)).toBe(capability);
  });

  it.each([
    [400, 'Tool call id was null but must be a-z, A-Z, 0-9, with a length of 9.'],
    [400, 'The "function.arguments" parameter of the code model must be in JSON format.'],
    [400, "This model's maximum context length is 8192 tokens (1200 in the functions)."],
    [500, 'upstream failure'],
    [503, 'tools are not supported'],
    [400, 'Failed to call a function. Please adjust your prompt.'],
  ])('%i %s: not a refusal', (status, message) => {
    expect(refusalOf(status, message, tools)).toBeNull();
  });

  it('a forced tool choice, a JSON schema format and stream_options are refusals only when asked for', () => {
    const choice = "tool_choice must be one of 'none', 'auto' or 'required'";
    expect(refusalOf(400, choice, { tools: true, toolChoice: 'named' })).toBe('namedToolChoice');
    expect(refusalOf(400, choice, tools)).toBeNull();
    const format = 'response_format type must be one of "text" or "json_object", but got: json_schema';
    expect(refusalOf(400, format, { jsonSchema: true })).toBe('jsonSchema');
    expect(refusalOf(400, format, tools)).toBeNull();
    expect(refusalOf(400, 'This response_format type is unavailable now', { jsonSchema: true })).toBe('jsonSchema');
    // Tools, but not streamed: only a streamed request is refused that way.
    expect(refusalOf(500, 'Cannot use tools with stream', { tools: true, stream: true })).toBe('streamedTools');
    expect(refusalOf(500, 'Cannot use tools with stream', { tools: true })).toBe('tools');
    expect(refusalOf(400, 'Unknown parameter: stream_options', { streamUsage: true })).toBe('streamUsage');
  });
});

describe('failureKind', () => {
  it('names what a user can be told', () => {
    const status = (s: number, message = 'x') => Object.assign(new Error(message), { status: s });
    expect(failureKind(status(401))).toBe('credentials');
    expect(failureKind(status(404))).toBe('not-found');
    expect(failureKind(status(429))).toBe('busy');
    expect(failureKind(status(503))).toBe('server-error');
    expect(failureKind(status(504))).toBe('timeout');
    expect(failureKind(status(400, '400 The response was filtered: content management policy'))).toBe('content-filter');
    expect(failureKind(status(400))).toBe('rejected');
    expect(failureKind(new ModelIdleError(1000))).toBe('timeout');
    expect(failureKind(new ModelOutputError('format', 'no JSON'))).toBe('format');
    expect(failureKind(new TypeError('fetch failed'))).toBe('unreachable');
    expect(failureKind(new TypeError('x is not a function'))).toBe('server-error');
  });
});
