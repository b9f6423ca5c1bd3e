import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { memoryRouter, renderRoutes } from '../../test/render.tsx';
import { fakeTimers } from '../../test/socket.ts';
import { TourPage, type TourPageProps } from './TourPage.tsx';
import { CONTINUE_DELAY_MS, MESSAGE_PAUSE_MS, MIN_HUMAN_PAUSE_MS, pauseBefore, typingDelays } from './tour.engine.ts';
import { TOUR_SCRIPT } from './tour.script.ts';

/** Longer than any stage takes to play. */
const WHOLE_STAGE_MS = 120_000;

function setup(mode: TourPageProps['mode'], props: Partial<TourPageProps> = {}) {
  const timers = fakeTimers();
  const path = mode === 'guest' ? '/guest-tour' : '/demo-tour';
  const router = memoryRouter(
    [
      { path, element: <TourPage mode={mode} clock={timers} random={() => 0} timeScale={1} {...props} /> },
      { path: '/', element: <h1>Home page</h1> },
      { path: '/onboarding', element: <h1>Onboarding page</h1> },
    ],
    { initialEntries: [path] },
  );
  render(router.element);
  const sidebar = () => within(screen.getByRole('complementary', { name: 'Tour guide' }));
  const button = (name: RegExp | string = /^(Continue|Finish Tour|Start Onboarding)$/) =>
    screen.getByRole('button', { name });
  const finishStage = () => timers.advance(WHOLE_STAGE_MS);
  const features = () =>
    within(sidebar().getByRole('list'))
      .getAllByRole('listitem')
      .map((li) => li.textContent);
  return { timers, router, sidebar, button, finishStage, features };
}

describe('TourPage', () => {
  it('shows the step, the explanation and the features so far in the sidebar', async () => {
    const { sidebar, features, finishStage, button } = setup('guest');
    expect(screen.getByRole('heading', { level: 1, name: 'Guest Tour' })).toBeInTheDocument();
    expect(sidebar().getByText('Step 1 of 4')).toBeInTheDocument();
    expect(sidebar().getByRole('heading', { name: TOUR_SCRIPT[0]?.title })).toBeInTheDocument();
    expect(sidebar().getByText(TOUR_SCRIPT[0]?.explanation ?? '')).toBeInTheDocument();
    expect(sidebar().getByRole('heading', { name: 'Key Features' })).toBeInTheDocument();
    expect(features()).toEqual(TOUR_SCRIPT[0]?.features);

    finishStage();
    await userEvent.click(button('Continue'));
    expect(sidebar().getByText('Step 2 of 4')).toBeInTheDocument();
    expect(sidebar().getByText(TOUR_SCRIPT[1]?.explanation ?? '')).toBeInTheDocument();
    expect(features()).toEqual([...(TOUR_SCRIPT[0]?.features ?? []), ...(TOUR_SCRIPT[1]?.features ?? [])]);
  });

  it('plays the conversation: typing indicator, then the assistant; the human types letter by letter', () => {
    const { timers } = setup('guest');
    const first = TOUR_SCRIPT[0]?.messages[0]?.text ?? '';
    const second = TOUR_SCRIPT[0]?.messages[1]?.text ?? '';
    expect(screen.getByRole('img', { name: 'Daybook is typing' })).toBeInTheDocument();
    timers.advance(MESSAGE_PAUSE_MS);
    expect(screen.queryByRole('img', { name: 'Daybook is typing' })).not.toBeInTheDocument();
    expect(screen.getByRole('article', { name: 'Daybook said' })).toHaveTextContent(first);
    // With random() = 0 each letter takes 50 ms.
    timers.advance(MIN_HUMAN_PAUSE_MS + 50 * 3);
    const typing = screen.getByRole('article', { name: 'Maya said' });
    expect(typing.querySelector('.chat-text')?.textContent).toBe(second.slice(0, 3));
    expect(typing).toHaveTextContent('Maya is typing...');
    timers.advance(WHOLE_STAGE_MS);
    expect(typing.querySelector('.chat-text')?.textContent).toBe(second);
    expect(typing).not.toHaveTextContent('Maya is typing...');
  });

  it('shows whole messages at once with reduced motion', () => {
    const { timers } = setup('guest', { reducedMotion: true });
    timers.advance(MESSAGE_PAUSE_MS + MIN_HUMAN_PAUSE_MS);
    expect(screen.getByRole('article', { name: 'Maya said' })).toHaveTextContent(
      TOUR_SCRIPT[0]?.messages[1]?.text ?? '',
    );
  });

  it('keeps Continue disabled until the stage has played and 3 s more have passed, then focuses it', () => {
    const { timers, button } = setup('guest');
    expect(button('Continue')).toBeDisabled();
    const first = TOUR_SCRIPT[0];
    if (!first) throw new Error('no stage');
    // With random() = 0 the stage takes exactly its pauses plus its typing.
    const played = first.messages.reduce(
      (sum, m) =>
        sum + pauseBefore(m) + (m.author === 'human' ? typingDelays(m.text, () => 0).reduce((a, b) => a + b) : 0),
      0,
    );
    timers.advance(played - 1);
    expect(screen.queryByText('Take a moment to read...')).not.toBeInTheDocument();
    timers.advance(1);
    expect(screen.getByText('Take a moment to read...')).toBeInTheDocument();
    expect(button('Continue')).toBeDisabled();
    timers.advance(CONTINUE_DELAY_MS - 1);
    expect(button('Continue')).toBeDisabled();
    timers.advance(1);
    expect(button('Continue')).toBeEnabled();
    expect(button('Continue')).toHaveFocus();
  });

  it('continues with Enter, and keeps earlier messages in the transcript', async () => {
    const { finishStage, sidebar } = setup('guest');
    finishStage();
    const before = screen.getAllByRole('article').length;
    (document.activeElement as HTMLElement | null)?.blur();
    await userEvent.keyboard('{Enter}');
    expect(sidebar().getByText('Step 2 of 4')).toBeInTheDocument();
    finishStage();
    expect(screen.getAllByRole('article').length).toBeGreaterThan(before);
    // Enter on the focused Continue button presses it.
    await userEvent.keyboard('{Enter}');
    expect(sidebar().getByText('Step 3 of 4')).toBeInTheDocument();
  });

  it('shows the research report like the chat does, with its sources', async () => {
    const { finishStage, button } = setup('guest');
    finishStage();
    await userEvent.click(button('Continue'));
    finishStage();
    await userEvent.click(button('Continue'));
    finishStage();
    await userEvent.click(screen.getByRole('button', { name: 'See the full report' }));
    expect(screen.getByRole('heading', { name: 'Conclusion' })).toBeInTheDocument();
    const sources = screen.getByRole('list', { name: 'Sources' });
    expect(within(sources).getByRole('link', { name: 'Scafell Pike, Wikipedia' })).toHaveAttribute(
      'href',
      'https://en.wikipedia.org/wiki/Scafell_Pike',
    );
  });

  it('the guest tour ends with Finish Tour, which goes home, and never offers onboarding', async () => {
    const { finishStage, button, router } = setup('guest');
    for (let step = 1; step < 4; step++) {
      expect(screen.queryByRole('link', { name: 'Start Onboarding' })).not.toBeInTheDocument();
      finishStage();
      await userEvent.click(button('Continue'));
    }
    expect(button('Finish Tour')).toBeDisabled();
    finishStage();
    expect(screen.getByText(/Remembered: Runs on Wednesday evenings/)).toBeInTheDocument();
    await userEvent.click(button('Finish Tour'));
    expect(router.state.location.pathname).toBe('/');
    expect(screen.getByRole('heading', { name: 'Home page' })).toBeInTheDocument();
  });

  it('the new-user tour offers a Start Onboarding link before the last stage, and ends with Start Onboarding', async () => {
    const { finishStage, button, router } = setup('new-user');
    expect(screen.getByRole('heading', { level: 1, name: 'Demo Tour' })).toBeInTheDocument();
    for (let step = 1; step < 4; step++) {
      expect(screen.getByRole('link', { name: 'Start Onboarding' })).toHaveAttribute('href', '/onboarding');
      finishStage();
      await userEvent.click(button('Continue'));
    }
    expect(screen.queryByRole('link', { name: 'Start Onboarding' })).not.toBeInTheDocument();
    finishStage();
    await userEvent.keyboard('{Enter}');
    expect(router.state.location.pathname).toBe('/onboarding');
  });

  it('the skip link leads to onboarding at once', async () => {
    const { router } = setup('new-user');
    await userEvent.click(screen.getByRole('link', { name: 'Start Onboarding' }));
    expect(router.state.location.pathname).toBe('/onboarding');
  });

  it('announces each finished message to screen readers', () => {
    const { timers } = setup('guest');
    const live = () => document.querySelector('[aria-live="polite"]');
    expect(live()).toHaveTextContent('Step 1 of 4: Meet your assistant');
    timers.advance(MESSAGE_PAUSE_MS);
    expect(live()).toHaveTextContent(/^Daybook: Hi Maya/);
  });
});

describe('tour routes', () => {
  it('/guest-tour is public and shows the Guest Tour', async () => {
    renderRoutes(routes, { path: '/guest-tour' });
    expect(
      await screen.findByRole('heading', { level: 1, name: 'Guest Tour' }, { timeout: 10_000 }),
    ).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Continue' })).toBeDisabled();
  });
});
