import { MEMORY_IMPORT_BYTES_MAX, type TMemoryImportResult, ZMemoryImport } from '@daybook/contracts';
import { type ChangeEvent, useId, useRef, useState } from 'react';
import { ApiError } from '../../lib/api.ts';
import { importMemories } from './api.ts';

export const IMPORT_INVALID = 'That file is not a Daybook memories export.';
export const IMPORT_FAILED = 'Failed to import memories. Please try again.';
const LIMIT_MB = Math.round(MEMORY_IMPORT_BYTES_MAX / 1024 / 1024);
export const IMPORT_TOO_LARGE = `That file is too large to import: the limit is ${LIMIT_MB} MB.`;
/** What an import file looks like, for a file that is JSON but not that. */
export const IMPORT_SHAPE =
  'Expected the file that "Export" downloads: {"memories": [{"key": "...", "data": "...", "memory_type": "..."}, ...]}, or just the list of memories.';
const WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};
const MAX_DETAILS = 3;

export const importSummary = ({ created, updated, unchanged }: TMemoryImportResult) =>
  `Imported: ${created} new, ${updated} updated, ${unchanged} unchanged.`;

export interface ImportProblem {
  message: string;
  details: string[];
}

/** "memories.3.key" reads as "Memory 4 (key)". */
function placeOf(path: string): string {
  const match = /^memories\.(\d+)(?:\.(.+))?$/.exec(path);
  if (!match) return path;
  return `Memory ${Number(match[1]) + 1}${match[2] ? ` (${match[2]})` : ''}`;
}

function describe(problems: [path: string, message: string][]): string[] {
  const lines = problems
    .slice(0, MAX_DETAILS)
    .map(([path, message]) => (path ? `${placeOf(path)}: ${message}` : message));
  const more = problems.length - MAX_DETAILS;
  if (more > 0) lines.push(`…and ${more} more ${more === 1 ? 'problem' : 'problems'}.`);
  return lines;
}

/** The file checked with the import contract before it is sent; the server checks it again. */
function readExport(text: string): { body: unknown } | ImportProblem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: IMPORT_INVALID, details: ['The file is not valid JSON.'] };
  }
  const body = Array.isArray(parsed) ? { memories: parsed } : parsed;
  const memories = (body as { memories?: unknown } | null)?.memories;
  if (typeof body !== 'object' || body === null || !Array.isArray(memories))
    return { message: IMPORT_INVALID, details: [IMPORT_SHAPE] };
  const result = ZMemoryImport.safeParse(body);
  if (result.success) return { body };
  return {
    message: IMPORT_INVALID,
    details: describe(result.error.issues.map((issue) => [issue.path.join('.'), plainWords(issue)])),
  };
}

/** A field's problem in plain words: the contract's own message, or what the field must be. */
function plainWords(issue: { code: string; message: string; expected?: unknown }): string {
  if (issue.code === 'invalid_type' && typeof issue.expected === 'string')
    return `must be ${WORDS[issue.expected] ?? issue.expected}`;
  if (issue.code === 'invalid_value' || issue.code === 'invalid_enum_value') return 'is not one of the allowed values';
  return issue.message.startsWith('Invalid input') ? 'is not valid' : issue.message;
}

function problemOf(err: unknown): ImportProblem {
  if (err instanceof ApiError && err.status === 400) {
    const fields = Object.entries(err.fieldErrors ?? {}).flatMap(([path, messages]) =>
      messages.map((message): [string, string] => [path, message]),
    );
    return { message: IMPORT_INVALID, details: fields.length ? describe(fields) : [err.message] };
  }
  // Another import still running, or the memory limit: the server says which.
  if (err instanceof ApiError && err.status === 409) return { message: err.message, details: [] };
  if (err instanceof ApiError && err.status === 413) return { message: IMPORT_TOO_LARGE, details: [] };
  return { message: IMPORT_FAILED, details: [] };
}

export interface ImportButtonProps {
  onImported: (result: TMemoryImportResult) => void;
  onFailed: (problem: ImportProblem) => void;
}

/** Picks an export file (.json) and sends it to the import call. */
export function ImportButton({ onImported, onFailed }: ImportButtonProps) {
  const inputId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);

  async function onChange(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    // Cleared so that choosing the same file again is a new change.
    event.target.value = '';
    if (!file) return;
    if (file.size > MEMORY_IMPORT_BYTES_MAX) {
      const mb = (file.size / 1024 / 1024).toFixed(1);
      onFailed({ message: IMPORT_TOO_LARGE, details: [`This file is ${mb} MB.`] });
      return;
    }
    setBusy(true);
    try {
      const read = readExport(await file.text());
      if (!('body' in read)) {
        onFailed(read);
        return;
      }
      onImported(await importMemories(read.body));
    } catch (err) {
      onFailed(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <label htmlFor={inputId} className="visually-hidden">
        Import memories from a file
      </label>
      <input
        ref={inputRef}
        id={inputId}
        type="file"
        accept=".json,application/json"
        className="visually-hidden"
        tabIndex={-1}
        onChange={(event) => void onChange(event)}
      />
      <button type="button" className="btn btn-secondary" disabled={busy} onClick={() => inputRef.current?.click()}>
        {busy ? 'Importing...' : 'Import'}
      </button>
    </>
  );
}
