// The user's own data: downloading it as one file, and deleting the account.
import { ZApiError, ZDeleteAccountResponse } from '@daybook/contracts';
import { ApiError, apiRequest, GENERIC_ERROR, statusText } from '../../lib/api.ts';

export const EXPORT_PATH = '/api/users/me/export/';
const FALLBACK_FILENAME = 'daybook-export.json';

/** The file name the server chose, when it is a plain one. */
export function filenameFrom(disposition: string | null): string {
  const name = /filename="([^"/\\]+)"/.exec(disposition ?? '')?.[1];
  return name ?? FALLBACK_FILENAME;
}

/**
 * Fetches the export, telling `onProgress` how many bytes arrived (the server writes it as it reads,
 * so there is no total). Throws ApiError on a refusal or a broken download.
 */
export async function fetchExport(
  onProgress: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<{ blob: Blob; filename: string }> {
  let response: Response;
  try {
    response = await fetch(EXPORT_PATH, {
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(GENERIC_ERROR, 0, 'network_error');
  }
  if (!response.ok) {
    const parsed = ZApiError.safeParse(await response.json().catch(() => undefined));
    if (parsed.success) throw new ApiError(parsed.data.error, response.status, parsed.data.code);
    throw new ApiError(statusText(response.status), response.status);
  }
  const parts: Uint8Array[] = [];
  let bytes = 0;
  try {
    const reader = response.body?.getReader();
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        bytes += value.byteLength;
        onProgress(bytes);
      }
    } else {
      const whole = new Uint8Array(await response.arrayBuffer());
      parts.push(whole);
      onProgress(whole.byteLength);
    }
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    // The server ends the response early when it fails half-way: no half file.
    throw new ApiError(GENERIC_ERROR, 0, 'network_error');
  }
  return {
    blob: new Blob(parts as BlobPart[], { type: 'application/json' }),
    filename: filenameFrom(response.headers.get('content-disposition')),
  };
}

/** Hands the file to the browser's downloads. */
export function saveFile(blob: Blob, filename: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the file over.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const deleteAccount = (password: string) =>
  apiRequest('/api/users/me/delete/', ZDeleteAccountResponse, { method: 'POST', body: { password } });
