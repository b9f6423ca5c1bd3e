import type { TMemory } from '@daybook/contracts';
import { Link } from 'react-router-dom';
import { cut, DATA_CUT, formatDate, isWebUrl, URL_CUT } from './format.ts';

export interface MemoryTableProps {
  memories: readonly TMemory[];
  /** Edit, or Restore for a deleted memory. */
  onOpen: (memory: TMemory) => void;
  onDelete: (memory: TMemory) => void;
  busy?: boolean;
}

/** A table on wide screens; below 640 px each row becomes a card (memories.css). */
export function MemoryTable({ memories, onOpen, onDelete, busy = false }: MemoryTableProps) {
  return (
    <div className="memory-table-wrap" aria-busy={busy || undefined}>
      <table className="memory-table">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Data</th>
            <th scope="col">Type</th>
            <th scope="col">URL</th>
            <th scope="col">Frequency</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {memories.map((memory) => (
            <MemoryRow key={memory.id} memory={memory} onOpen={onOpen} onDelete={onDelete} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MemoryRow({ memory, onOpen, onDelete }: { memory: TMemory } & Omit<MemoryTableProps, 'memories'>) {
  const deleted = memory.deleted_at !== null;
  const data = cut(memory.data, DATA_CUT);
  // Where the assistant learned it: the message in the chat or in the onboarding interview.
  const learnedIn = memory.source === 'chat' || memory.source === 'onboarding' ? memory.source : null;
  const learnedFrom = learnedIn && memory.source_message_id;
  return (
    <tr className={deleted ? 'memory-row is-deleted' : 'memory-row'}>
      {/* Only the key, so that the cell is named by it. */}
      <td className="memory-key">{memory.key}</td>
      <td className="memory-data" data-label="Data">
        <span title={data === memory.data ? undefined : memory.data}>{data}</span>
        {(memory.deleted_at || learnedFrom) && (
          <span className="memory-meta">
            {memory.deleted_at && (
              <span className="badge badge-muted">
                <time dateTime={memory.deleted_at}>{`Deleted ${formatDate(memory.deleted_at)}`}</time>
              </span>
            )}
            {learnedFrom && (
              <Link className="memory-source" to={`/${learnedIn}?message=${learnedFrom}`}>
                {learnedIn === 'chat' ? 'Learned from chat' : 'Learned during onboarding'}
              </Link>
            )}
          </span>
        )}
      </td>
      <td className="memory-type" data-label="Type">
        <span className="badge badge-type">{memory.memory_type_display}</span>
      </td>
      <td className={memory.url ? 'memory-url' : 'memory-url is-empty'} data-label="URL">
        {!memory.url ? (
          <None />
        ) : isWebUrl(memory.url) ? (
          <a href={memory.url} target="_blank" rel="noopener noreferrer" title={memory.url}>
            {cut(memory.url, URL_CUT)} <span className="visually-hidden">(opens in a new tab)</span>
          </a>
        ) : (
          <span title={memory.url}>{cut(memory.url, URL_CUT)}</span>
        )}
      </td>
      <td
        className={memory.frequency_description ? 'memory-frequency' : 'memory-frequency is-empty'}
        data-label="Frequency"
      >
        {memory.frequency_description || <None />}
      </td>
      <td className="memory-actions">
        <div className="memory-action-buttons">
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            aria-label={`${deleted ? 'Restore' : 'Edit'} memory ${memory.key}`}
            onClick={() => onOpen(memory)}
          >
            {deleted ? 'Restore' : 'Edit'}
          </button>
          <button
            type="button"
            className="btn btn-ghost btn-sm btn-danger-text"
            aria-label={`Delete memory ${memory.key}`}
            onClick={() => onDelete(memory)}
          >
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
}

const None = () => (
  <span className="memory-none">
    <span aria-hidden="true">—</span>
    <span className="visually-hidden">None</span>
  </span>
);
