// Recorded model-provider traffic (tests/fixtures/model-providers, sources in its SOURCES.md),
// loaded as the server sent it: streams as their chunks (or raw SSE text), bodies, error bodies.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const RECORDINGS_DIR = join(import.meta.dirname, '../../fixtures/model-providers');

export type Chunk = Record<string, unknown>;

export interface ErrorRecording {
  file: string;
  status: number;
  contentType?: string;
  /** The body exactly as it goes out. */
  body: string;
}

const read = (file: string) => readFileSync(join(RECORDINGS_DIR, file), 'utf8');

/** A stream's chunks: `*.chunks.txt` (a JSON object a line) or the data lines of `*.sse`. */
export function streamChunks(file: string): Chunk[] {
  const text = read(file);
  const lines = file.endsWith('.sse')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .filter((l) => l && l !== '[DONE]')
    : text.split('\n').filter((l) => l.trim());
  return lines.map((l) => JSON.parse(l) as Chunk);
}

/** A recorded stream as the server sent it, byte for byte (`*.sse`), or rebuilt from its chunks. */
export function streamText(file: string): string {
  if (file.endsWith('.sse')) return read(file);
  return `${streamChunks(file)
    .map((c) => `data: ${JSON.stringify(c)}\n\n`)
    .join('')}data: [DONE]\n\n`;
}

export const body = (file: string): Chunk => JSON.parse(read(file)) as Chunk;

/** A recorded file's text, as it is. */
export const raw = (file: string): string => read(file);

export function errorRecording(file: string): ErrorRecording {
  const e = JSON.parse(read(file)) as { status: number; contentType?: string; body: unknown };
  return {
    file,
    status: e.status,
    contentType: e.contentType ?? (typeof e.body === 'string' ? 'text/plain' : 'application/json'),
    body: typeof e.body === 'string' ? e.body : JSON.stringify(e.body),
  };
}

/** An error body a source documents but no recording holds (named with its source). */
export function documentedError(source: string, status: number, json: unknown): ErrorRecording {
  return { file: `documented: ${source}`, status, contentType: 'application/json', body: JSON.stringify(json) };
}
