import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred, mockFetch, type Reply, reply } from '../../test/fetch.ts';
import { SKIP_FAILED, SKIP_ONBOARDING_PATH, SkipOnboardingButton } from './OnboardingSkip.tsx';

function renderSkip() {
  return render(
    <MemoryRouter initialEntries={['/onboarding']}>
      <Routes>
        <Route path="/onboarding" element={<SkipOnboardingButton />} />
        <Route path="/chat" element={<h1>The chat</h1>} />
      </Routes>
    </MemoryRouter>,
  );
}

describe('SkipOnboardingButton', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('ends the onboarding on the server with the CSRF token, then opens the chat', async () => {
    const answer = deferred<Reply>();
    const { calls } = mockFetch({ [`POST ${SKIP_ONBOARDING_PATH}`]: () => answer.promise });
    renderSkip();
    await userEvent.click(screen.getByRole('button', { name: 'Skip for now' }));
    expect(screen.getByRole('button', { name: 'Skipping...' })).toBeDisabled();
    answer.resolve(reply(200, { onboarded: true, redirect: '/chat' }));
    expect(await screen.findByRole('heading', { name: 'The chat' })).toBeInTheDocument();
    const [request] = calls(`POST ${SKIP_ONBOARDING_PATH}`);
    expect(request?.headers.get('X-CSRFToken')).toBeTruthy();
  });

  it('says so when the server cannot be reached, and can be pressed again', async () => {
    mockFetch({ [`POST ${SKIP_ONBOARDING_PATH}`]: reply(503, { error: 'Service unavailable', code: 'unavailable' }) });
    renderSkip();
    await userEvent.click(screen.getByRole('button', { name: 'Skip for now' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Service unavailable');
    expect(screen.getByRole('button', { name: 'Skip for now' })).toBeEnabled();
    expect(screen.queryByRole('heading', { name: 'The chat' })).toBeNull();
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('offline')));
    await userEvent.click(screen.getByRole('button', { name: 'Skip for now' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(SKIP_FAILED);
  });
});
