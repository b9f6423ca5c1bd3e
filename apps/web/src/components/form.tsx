// Form state and labelled fields shared by the app's forms.
import {
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useId,
  useState,
} from 'react';

export type FormErrors<K extends string> = Partial<Record<K, string>>;

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

interface FieldFrame {
  id: string;
  label: string;
  error?: string;
  hint?: ReactNode;
  /** Shown under the control, e.g. a "Forgot your password?" link. */
  after?: ReactNode;
}

/** The label, error and hint around one control; `control` gets the ARIA attributes that tie them together. */
function FieldShell({
  id,
  label,
  error,
  hint,
  after,
  control,
}: FieldFrame & {
  control: (aria: { 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode;
}) {
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : null, hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      {control({ 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
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

export interface FieldProps
  extends FieldFrame,
    Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'> {
  value: string;
  onChange: (value: string) => void;
}

export function Field({ id, label, error, hint, after, onChange, type = 'text', ...input }: FieldProps) {
  const [revealed, setRevealed] = useState(false);
  const isPassword = type === 'password';
  return (
    <FieldShell
      id={id}
      label={label}
      error={error}
      hint={hint}
      after={after}
      control={(aria) => {
        const control = (
          <input
            id={id}
            className="input"
            type={isPassword && revealed ? 'text' : type}
            {...aria}
            onChange={(event) => onChange(event.target.value)}
            {...input}
          />
        );
        if (!isPassword) return control;
        return (
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
        );
      }}
    />
  );
}

/** The email input of every account form, with the attributes phones and password managers expect. */
export function EmailField(props: Omit<FieldProps, 'label' | 'type'>) {
  return (
    <Field
      label="Email"
      type="email"
      autoComplete="email"
      inputMode="email"
      autoCapitalize="none"
      spellCheck={false}
      {...props}
    />
  );
}

export interface TextAreaFieldProps
  extends FieldFrame,
    Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id' | 'value' | 'onChange'> {
  value: string;
  onChange: (value: string) => void;
}

export function TextAreaField({ id, label, error, hint, after, onChange, ...textarea }: TextAreaFieldProps) {
  return (
    <FieldShell
      id={id}
      label={label}
      error={error}
      hint={hint}
      after={after}
      control={(aria) => (
        <textarea
          id={id}
          className="input"
          {...aria}
          onChange={(event) => onChange(event.target.value)}
          {...textarea}
        />
      )}
    />
  );
}

export interface SelectFieldProps
  extends FieldFrame,
    Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id' | 'value' | 'onChange'> {
  value: string;
  onChange: (value: string) => void;
  options: readonly { value: string; label: string }[];
}

export function SelectField({ id, label, error, hint, after, onChange, options, ...select }: SelectFieldProps) {
  return (
    <FieldShell
      id={id}
      label={label}
      error={error}
      hint={hint}
      after={after}
      control={(aria) => (
        <select id={id} className="input" {...aria} onChange={(event) => onChange(event.target.value)} {...select}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    />
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
