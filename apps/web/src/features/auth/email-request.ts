// The submit routine of the forms that only ask for an email and send it somewhere
// (forgot password, resend verification).
import { type FormEvent, useState } from 'react';
import { useForm } from '../../components/form.tsx';
import { ApiError, serverFieldErrors } from '../../lib/api.ts';
import { RATE_LIMITED_MESSAGE } from './allauth.ts';
import { validateEmailForm } from './validation.ts';

export function useEmailRequest<T>(initialEmail: string, send: (email: string) => Promise<T>, failedMessage: string) {
  const form = useForm({ email: initialEmail }, validateEmailForm);
  const [busy, setBusy] = useState(false);
  /** The address the request went to, once it succeeded. */
  const [sentTo, setSentTo] = useState<string | null>(null);
  /** The server's answer, once it succeeded. */
  const [answer, setAnswer] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setError(null);
    const email = form.values.email.trim();
    try {
      setAnswer(await send(email));
      setSentTo(email);
    } catch (err) {
      const fields = serverFieldErrors(err, ['email']);
      form.showServerErrors(fields);
      if (err instanceof ApiError && err.status === 429) setError(RATE_LIMITED_MESSAGE);
      else if (!fields.email) setError(failedMessage);
    } finally {
      setBusy(false);
    }
  }

  return { form, busy, sentTo, answer, error, onSubmit };
}
