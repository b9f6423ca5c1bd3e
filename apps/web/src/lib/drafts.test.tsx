import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuthProvider, type AuthState, useAuth } from '../features/auth/auth-context.tsx';
import { claimDrafts, clearDrafts, loadDraft, saveDraft } from './drafts.ts';

/** Records the draft each session state would render with. */
function Probe({ seen }: { seen: string[] }) {
  const { state } = useAuth();
  if (state.status !== 'loading') seen.push(`${state.status}:${loadDraft('chat')}`);
  return <p>{state.status}</p>;
}

describe('drafts', () => {
  it('keeps a draft per name and forgets an emptied one', () => {
    saveDraft('chat', 'Half a thought');
    saveDraft('onboarding', 'Another');
    expect(loadDraft('chat')).toBe('Half a thought');
    saveDraft('chat', '');
    expect(loadDraft('chat')).toBe('');
    expect(window.sessionStorage.getItem('daybook.draft.chat')).toBeNull();
    clearDrafts();
    expect(loadDraft('onboarding')).toBe('');
  });

  it('keeps drafts for the user who wrote them, and drops them for anyone else or nobody', () => {
    claimDrafts(7);
    saveDraft('chat', 'written by 7');
    claimDrafts(7);
    expect(loadDraft('chat')).toBe('written by 7');
    claimDrafts(8);
    expect(loadDraft('chat')).toBe('');
    saveDraft('chat', 'written by 8');
    claimDrafts(null);
    expect(loadDraft('chat')).toBe('');
    window.sessionStorage.setItem('daybook.other', 'untouched');
    claimDrafts(9);
    expect(window.sessionStorage.getItem('daybook.other')).toBe('untouched');
  });

  it('are cleared before a different session renders anything', async () => {
    claimDrafts(1);
    saveDraft('chat', 'from user 1');
    const seen: string[] = [];
    const other: AuthState = { status: 'authenticated', user: { id: 2, email: 'two@example.com' } };
    render(
      <AuthProvider loadSession={async () => other}>
        <Probe seen={seen} />
      </AuthProvider>,
    );
    await screen.findByText('authenticated');
    expect(seen).toEqual(['authenticated:']);
  });
});
