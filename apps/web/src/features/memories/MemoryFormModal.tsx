import {
  MEMORY_DATA_MAX,
  MEMORY_FREQUENCY_MAX,
  MEMORY_KEY_MAX,
  MEMORY_URL_MAX,
  type TMemory,
  type TMemoryCategory,
  ZMemoryInput,
} from '@daybook/contracts';
import { type FormEvent, useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { Field, type FormErrors, SelectField, TextAreaField, useForm } from '../../components/form.tsx';
import { Modal } from '../../components/Modal.tsx';
import { ApiError, serverFieldErrors } from '../../lib/api.ts';
import { createMemory, deleteMemory, updateMemory } from './api.ts';
import { formatDateTime } from './format.ts';

export const SAVE_FAILED = 'Failed to save memory. Please try again.';
export const DELETE_FAILED = 'Failed to delete memory. Please try again.';
export const BLANK_NEW = 'Memory data cannot be blank. Please enter some data or cancel.';
export const BLANK_EDIT = 'Saving with blank data will delete this memory. Are you sure you want to proceed?';
export const NO_REASON = 'No reason provided';

/** Add a new memory, edit an active one, or edit and restore a deleted one. */
export type MemoryFormTarget = { mode: 'add' } | { mode: 'edit' | 'restore'; memory: TMemory };
type Mode = MemoryFormTarget['mode'];

const TITLES: Record<Mode, string> = { add: 'Add New Memory', edit: 'Edit Memory', restore: 'Restore Memory' };
const SUBMIT_LABELS: Record<Mode, string> = { add: 'Add Memory', edit: 'Save Changes', restore: 'Restore Memory' };

type FieldName = 'key' | 'data' | 'memory_type' | 'url' | 'frequency_description';
type Values = Record<FieldName, string>;
const FIELDS: readonly FieldName[] = ['key', 'data', 'memory_type', 'url', 'frequency_description'];

/**
 * The contract's checks, except blank data: a new (or restored) memory needs data, while an edit
 * that blanks it asks to delete the memory instead.
 */
export function validateMemory(values: Values, mode: Mode): FormErrors<FieldName> {
  const errors: FormErrors<FieldName> = {};
  const result = ZMemoryInput.safeParse(values);
  for (const issue of result.success ? [] : result.error.issues) {
    errors[issue.path[0] as FieldName] ??= issue.message;
  }
  if (values.data.trim() === '') errors.data = mode === 'edit' ? undefined : BLANK_NEW;
  return errors;
}

function initialValues(target: MemoryFormTarget): Values {
  if (target.mode === 'add') return { key: '', data: '', memory_type: 'text', url: '', frequency_description: '' };
  const { key, data, memory_type, url, frequency_description } = target.memory;
  return { key, data, memory_type, url: url ?? '', frequency_description: frequency_description ?? '' };
}

export interface MemoryFormModalProps {
  target: MemoryFormTarget | null;
  categories: readonly TMemoryCategory[];
  onClose: () => void;
  onSaved: (memory: TMemory, mode: Mode) => void;
  /** The edit was saved with blank data and the memory deleted. */
  onDeleted: (memory: TMemory) => void;
}

export function MemoryFormModal({ target, ...props }: MemoryFormModalProps) {
  if (!target) return null;
  // A fresh form for each memory.
  const formKey = target.mode === 'add' ? 'add' : `${target.mode}-${target.memory.id}`;
  return <MemoryFormDialog key={formKey} target={target} {...props} />;
}

function MemoryFormDialog({
  target,
  categories,
  onClose,
  onSaved,
  onDeleted,
}: Omit<MemoryFormModalProps, 'target'> & { target: MemoryFormTarget }) {
  const { mode } = target;
  const memory = target.mode === 'add' ? null : target.memory;
  const form = useForm(initialValues(target), (values) => validateMemory(values, mode));
  const [saving, setSaving] = useState(false);
  const [confirmingBlank, setConfirmingBlank] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const typeHint = categories.find((category) => category.value === form.values.memory_type)?.description;

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (saving || !form.check()) return;
    if (memory && mode === 'edit' && form.values.data.trim() === '') {
      setConfirmingBlank(true);
      return;
    }
    const parsed = ZMemoryInput.safeParse(form.values);
    if (!parsed.success) return;
    setSaving(true);
    setError(null);
    try {
      const saved = memory
        ? await updateMemory(memory.id, mode === 'restore' ? { ...parsed.data, restore_deleted: true } : parsed.data)
        : await createMemory(parsed.data);
      onSaved(saved, mode);
    } catch (err) {
      setSaving(false);
      const fields = serverFieldErrors(err, FIELDS);
      if (Object.keys(fields).length) {
        form.showServerErrors(fields);
        return;
      }
      // 409: the memory was deleted meanwhile; the server says to restore it first.
      setError(err instanceof ApiError && err.status === 409 ? err.message : SAVE_FAILED);
    }
  }

  async function deleteBlank() {
    if (!memory) return;
    setDeleting(true);
    try {
      await deleteMemory(memory.id);
      onDeleted(memory);
    } catch {
      setDeleting(false);
      setConfirmingBlank(false);
      setError(DELETE_FAILED);
    }
  }

  return (
    <>
      <Modal open onClose={onClose} title={TITLES[mode]} disableClose={saving || confirmingBlank}>
        <form className="memory-form" noValidate onSubmit={onSubmit}>
          {error && (
            <div className="memory-form-alert">
              <Banner onDismiss={() => setError(null)}>{error}</Banner>
            </div>
          )}
          {memory && mode === 'restore' && <DeletedDetails memory={memory} />}
          <Field
            {...form.field('key')}
            label="Key"
            required
            maxLength={MEMORY_KEY_MAX}
            autoComplete="off"
            hint="A short name, like “Favourite coffee”."
          />
          <TextAreaField {...form.field('data')} label="Data" required rows={5} maxLength={MEMORY_DATA_MAX} />
          <SelectField {...form.field('memory_type')} label="Type" options={categories} hint={typeHint} />
          <div className="memory-form-row">
            <Field
              {...form.field('url')}
              label="URL"
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              maxLength={MEMORY_URL_MAX}
              placeholder="https://example.com"
            />
            <Field
              {...form.field('frequency_description')}
              label="Frequency"
              autoComplete="off"
              maxLength={MEMORY_FREQUENCY_MAX}
              placeholder="e.g. 'weekly'"
            />
          </div>
          <div className="modal-actions">
            <button type="button" className="btn btn-secondary" onClick={onClose} disabled={saving}>
              Cancel
            </button>
            <button type="submit" className="btn btn-primary" disabled={saving}>
              {saving ? 'Saving...' : SUBMIT_LABELS[mode]}
            </button>
          </div>
        </form>
      </Modal>
      <ConfirmDialog
        open={confirmingBlank}
        title="Delete this memory?"
        message={BLANK_EDIT}
        confirmLabel="Delete"
        danger
        busy={deleting}
        onConfirm={() => void deleteBlank()}
        onCancel={() => setConfirmingBlank(false)}
      />
    </>
  );
}

function DeletedDetails({ memory }: { memory: TMemory }) {
  return (
    <div className="memory-deleted-details">
      <p className="memory-deleted-note">This memory is deleted. Restoring it makes it active again.</p>
      <dl>
        <div>
          <dt>Deleted At</dt>
          <dd>
            {memory.deleted_at ? <time dateTime={memory.deleted_at}>{formatDateTime(memory.deleted_at)}</time> : '—'}
          </dd>
        </div>
        <div>
          <dt>Deletion Reason</dt>
          <dd>{memory.deleted_reason?.trim() || NO_REASON}</dd>
        </div>
      </dl>
    </div>
  );
}
