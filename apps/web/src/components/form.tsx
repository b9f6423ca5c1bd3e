// Form state and labelled fields shared by the account screens.
import { type InputHTMLAttributes, type ReactNode, useId, useState } from 'react';
import type { FormErrors } from './validation.ts';

/**
 * Values and errors of a small form. Client errors show after the first submit and then follow
 * every edit; a server error on a field stays until that field is edited.
 */
export function useForm<K extends string>(
  initial: Record<K, string>,
  validate: (values: Record<K, string>) => FormErrors<K>,
) {
  const baseId = useId();
  const [values, setValues] = useState(initial);
  const [clientErrors, setClientErrors] = useState<FormErrors<K>>({});
  const [serverErrors, setServerErrors] = useState<FormErrors<K>>({});
  const [submitted, setSubmitted] = useState(false);
  const idOf = (name: K) => `${baseId}${name}`;
  const keys = Object.keys(initial) as K[];

  const setValue = (name: K, value: string) => {
    const next = { ...values, [name]: value };
    setValues(next);
    if (submitted) setClientErrors(validate(next));
    if (serverErrors[name]) setServerErrors((prev) => ({ ...prev, [name]: undefined }));
  };

  const errorOf = (name: K) => clientErrors[name] ?? serverErrors[name];

  const focusFirstError = (errors: FormErrors<K>) => {
    const first = keys.find((key) => errors[key]);
    if (first) document.getElementById(idOf(first))?.focus();
  };

  /** Validates everything; on failure shows the errors and focuses the first invalid field. */
  const check = (): boolean => {
    setSubmitted(true);
    const errors = validate(values);
    setClientErrors(errors);
    setServerErrors({});
    focusFirstError(errors);
    return !keys.some((key) => errors[key]);
  };

  const showServerErrors = (errors: FormErrors<K>) => {
    setServerErrors(errors);
    focusFirstError(errors);
  };

  const field = (name: K) => ({
    id: idOf(name),
    name,
    value: values[name],
    error: errorOf(name),
    onChange: (value: string) => setValue(name, value),
  });

  return {
    values,
    field,
    check,
    showServerErrors,
    focusFirstError: () => focusFirstError({ ...serverErrors, ...clientErrors }),
  };
}

export interface FieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'> {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  hint?: ReactNode;
  /** Shown under the input, e.g. a "Forgot your password?" link. */
  after?: ReactNode;
}

export function Field({ id, label, error, hint, after, onChange, type = 'text', ...input }: FieldProps) {
  const [revealed, setRevealed] = useState(false);
  const isPassword = type === 'password';
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : null, hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  const control = (
    <input
      id={id}
      className="input"
      type={isPassword && revealed ? 'text' : type}
      aria-invalid={error ? true : undefined}
      aria-describedby={describedBy}
      onChange={(event) => onChange(event.target.value)}
      {...input}
    />
  );
  return (
    <div className="field">
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      {isPassword ? (
        <div className="password-input">
          {control}
          <button
            type="button"
            className="password-toggle"
            aria-controls={id}
            onClick={() => setRevealed((shown) => !shown)}
          >
            {revealed ? 'Hide' : 'Show'}
            <span className="visually-hidden"> {label.toLowerCase()}</span>
          </button>
        </div>
      ) : (
        control
      )}
      {error && (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      )}
      {hint && (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      )}
      {after}
    </div>
  );
}

/** A form-level error, announced. */
export function FormError({ children }: { children: ReactNode }) {
  return (
    <div className="banner banner-error auth-alert" role="alert">
      <div className="banner-message">{children}</div>
    </div>
  );
}
