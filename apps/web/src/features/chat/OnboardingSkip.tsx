// "Skip for now" on the onboarding screen: ends the interview on the server (as typing "stop"
// does) and goes straight to the chat, which greets the user with what Daybook learned so far.
import { ZSkipOnboardingResponse } from '@daybook/contracts';
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { apiRequest, serverMessage } from '../../lib/api.ts';

export const SKIP_ONBOARDING_PATH = '/api/onboarding/skip/';
export const SKIP_FAILED = 'Could not skip the onboarding. Please try again.';

export function skipOnboarding() {
  return apiRequest(SKIP_ONBOARDING_PATH, ZSkipOnboardingResponse, { method: 'POST' });
}

export function SkipOnboardingButton() {
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const skip = async () => {
    setBusy(true);
    setError(null);
    try {
      const { redirect } = await skipOnboarding();
      navigate(redirect, { replace: true });
    } catch (err) {
      setError(serverMessage(err) ?? SKIP_FAILED);
      setBusy(false);
    }
  };
  return (
    <div className="onboarding-skip">
      <button type="button" className="btn btn-secondary btn-sm" onClick={() => void skip()} disabled={busy}>
        {busy ? 'Skipping...' : 'Skip for now'}
      </button>
      {error && (
        <p className="onboarding-skip-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
