import { MEMORY_MESSAGES } from '@daybook/contracts';
import { useEffect, useRef, useState } from 'react';
import { serverMessage } from '../../lib/api.ts';
import { saveFile } from '../account-data/api.ts';
import { fetchMemoriesExport } from './api.ts';

/** Downloads the export file; a refusal (the hourly limit, one already running) goes to `onFailed`. */
export function ExportButton({ onFailed }: { onFailed: (message: string) => void }) {
  const [busy, setBusy] = useState(false);
  const controller = useRef<AbortController | null>(null);
  useEffect(() => () => controller.current?.abort(), []);

  async function download() {
    const current = new AbortController();
    controller.current = current;
    setBusy(true);
    try {
      const { blob, filename } = await fetchMemoriesExport(current.signal);
      saveFile(blob, filename);
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      onFailed(serverMessage(err) ?? MEMORY_MESSAGES.exportFailed);
    } finally {
      if (!current.signal.aborted) setBusy(false);
    }
  }

  return (
    <button type="button" className="btn btn-secondary" disabled={busy} onClick={() => void download()}>
      {busy ? 'Exporting...' : 'Export'}
    </button>
  );
}
