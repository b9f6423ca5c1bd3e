// Research cards in the chat: the history's cards, their steps as events come, Cancel, and the
// outcome message that takes a card's place (the report, or a note on a failure or a cancel).
import { researchCancelledText, type TChatMessage, type TResearchCard } from '@daybook/contracts';
import { cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { renderChatPage } from '../../test/chat.tsx';

afterEach(cleanup);

const created = '2025-06-02T09:00:00.000Z';
function card(fields: Partial<TResearchCard> = {}): TResearchCard {
  return {
    id: 7,
    query: 'winter tyres for bikes',
    stage: 'planning',
    queries: [],
    pages: null,
    error: null,
    retrying: false,
    version: 1,
    created,
    ...fields,
  };
}

let nextId = 500;
const note = (raw_text: string, url?: string): TChatMessage => ({
  author_type: 'system',
  message_type: 'system_message',
  raw_text,
  message_id: nextId++,
  timestamp: created,
  ...(url ? { url } : {}),
});

function setup() {
  const chat = renderChatPage({ routes: [{ path: '/resources/research/:id', element: <h1>Research page</h1> }] });
  const connect = (researches: TResearchCard[] = [], messages: TChatMessage[] = []) =>
    chat.connect(messages, { researches });
  const { log, timers } = chat;
  const region = () => log().getByRole('region', { name: /^Research(ing| waiting| failed) winter tyres for bikes$/ });
  return { connect, log, region, timers };
}

describe('a research in the chat', () => {
  it('shows the card a reload brings, where the research stands, and follows its steps', () => {
    const { connect, region } = setup();
    const socket = connect([
      card({
        stage: 'reading',
        queries: ['winter tyres for bikes', 'studded bike tyres'],
        pages: { done: 2, total: 5 },
        version: 5,
      }),
    ]);
    const shown = within(region());
    expect(shown.getByText('Reading pages: 2 of 5')).toBeInTheDocument();
    expect(shown.getByRole('progressbar', { name: 'Pages read: 2 of 5' })).toHaveAttribute('value', '2');
    const searches = shown.getByRole('list', { name: 'Searches' });
    expect(
      within(searches)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['winter tyres for bikes', 'studded bike tyres']);
    const steps = within(shown.getByRole('list', { name: 'Steps' })).getAllByRole('listitem');
    expect(steps.map((s) => s.textContent)).toEqual(['Plan (done)', 'Search (done)', 'Read', 'Write']);
    expect(steps[2]).toHaveAttribute('aria-current', 'step');

    socket.receive({
      message_type: 'research',
      research: card({ stage: 'writing', pages: { done: 5, total: 5 }, version: 7 }),
    });
    expect(within(region()).getByText('Writing the report')).toBeInTheDocument();
    // A late event of an earlier step changes nothing.
    socket.receive({
      message_type: 'research',
      research: card({ stage: 'reading', pages: { done: 4, total: 5 }, version: 6 }),
    });
    expect(within(region()).getByText('Writing the report')).toBeInTheDocument();
  });

  it('says a waiting research waits, and one about to try again says that', () => {
    const { connect, log } = setup();
    const socket = connect([card({ stage: 'queued' })]);
    expect(log().getByText('Waiting for your earlier research to finish')).toBeInTheDocument();
    socket.receive({ message_type: 'research', research: card({ stage: 'queued', retrying: true, version: 3 }) });
    expect(log().getByText('Waiting to try again')).toBeInTheDocument();
  });

  it('says when its step waits for the assistant model, and stops saying so when its turn comes', () => {
    const { connect, region } = setup();
    const socket = connect([card({ stage: 'writing', waiting_for_model: true, version: 4 })]);
    expect(
      within(region()).getByText('Writing the report: waiting for the assistant model, which is busy'),
    ).toBeInTheDocument();
    socket.receive({ message_type: 'research', research: card({ stage: 'writing', version: 5 }) });
    expect(within(region()).getByText('Writing the report')).toBeInTheDocument();
  });

  it('Cancel asks the server once, says it is cancelling, and the note takes the card’s place', async () => {
    const { connect, log, region } = setup();
    const socket = connect([card({ stage: 'searching', queries: ['winter tyres for bikes'], version: 3 })]);
    const cancel = within(region()).getByRole('button', { name: 'Cancel' });
    await userEvent.click(cancel);
    expect(socket.sent).toEqual([{ message_type: 'cancel_research', id: 7 }]);
    expect(cancel).toHaveTextContent('Cancelling…');
    expect(cancel).toHaveAttribute('aria-disabled', 'true');
    await userEvent.click(cancel);
    expect(socket.sent).toHaveLength(1);

    socket.receive({ message_type: 'research', research: card({ stage: 'cancelled', version: 4 }) });
    socket.receive(note(researchCancelledText('winter tyres for bikes'), '/resources/research/7'));
    expect(log().queryByRole('region', { name: /winter tyres/ })).not.toBeInTheDocument();
    const shown = log().getByText('You cancelled the research on "winter tyres for bikes".').closest('p');
    expect(shown).not.toHaveClass('is-failed');
    expect(within(shown as HTMLElement).getByRole('link', { name: 'Details' })).toHaveAttribute(
      'href',
      '/resources/research/7',
    );
  });

  it('a failure reads as one: the card says what failed, then a note unlike a success stays', () => {
    const { connect, log, region } = setup();
    const socket = connect([card({ stage: 'writing', version: 5 })]);
    const error = 'The assistant model did not answer in time when asked to write the report.';
    socket.receive({ message_type: 'research', research: card({ stage: 'failed', error, version: 6 }) });
    expect(within(region()).getByText('The research failed')).toBeInTheDocument();
    expect(within(region()).getByText(error)).toBeInTheDocument();
    expect(within(region()).queryByRole('button', { name: 'Cancel' })).not.toBeInTheDocument();
    socket.receive(
      note(`I could not finish the research on "winter tyres for bikes". ${error}`, '/resources/research/7'),
    );
    expect(log().queryByRole('region', { name: /winter tyres/ })).not.toBeInTheDocument();
    expect(
      log()
        .getByText(/I could not finish the research/)
        .closest('p'),
    ).toHaveClass('chat-research-note', 'is-failed');
  });

  it('the report takes the card’s place; a card whose outcome the history holds is not shown', () => {
    const { connect, log } = setup();
    const report: TChatMessage = {
      author_type: 'assistant',
      message_type: 'research_report',
      raw_text: JSON.stringify({
        id: 7,
        query: 'winter tyres for bikes',
        report: 'Studs help on ice [1].',
        sources: [],
      }),
      message_id: nextId++,
      timestamp: created,
    };
    const socket = connect(
      [card({ stage: 'writing', version: 5 }), card({ id: 8, query: 'bike lights', version: 2 })],
      [{ ...report, raw_text: JSON.stringify({ id: 8, query: 'bike lights', report: 'Bright [1].', sources: [] }) }],
    );
    expect(log().queryByRole('region', { name: /bike lights/ })).not.toBeInTheDocument();
    expect(log().getByRole('region', { name: 'Researching winter tyres for bikes' })).toBeInTheDocument();
    socket.receive({ message_type: 'research', research: card({ stage: 'done', version: 6 }) });
    socket.receive(report);
    expect(log().queryByRole('region', { name: 'Researching winter tyres for bikes' })).not.toBeInTheDocument();
    // A late step of an ended research does not bring its card back.
    socket.receive({ message_type: 'research', research: card({ stage: 'writing', version: 5 }) });
    expect(log().queryByRole('region', { name: /Researching winter tyres/ })).not.toBeInTheDocument();
  });

  it('Cancel cannot be pressed while the connection is down', async () => {
    const { connect, region } = setup();
    const socket = connect([card({ stage: 'planning' })]);
    socket.serverClose(1006);
    const cancel = within(region()).getByRole('button', { name: 'Cancel' });
    expect(cancel).toHaveAttribute('aria-disabled', 'true');
    await userEvent.click(cancel);
    expect(socket.sent).toEqual([]);
  });

  it('a Cancel the connection lost can be pressed again after it reconnects', async () => {
    const { connect, region, timers } = setup();
    const socket = connect([card({ stage: 'reading', pages: { done: 1, total: 3 }, version: 4 })]);
    await userEvent.click(within(region()).getByRole('button', { name: 'Cancel' }));
    expect(within(region()).getByRole('button', { name: 'Cancelling…' })).toBeInTheDocument();
    socket.serverClose(1006);
    timers.advance(1_000);
    const again = connect([card({ stage: 'reading', pages: { done: 2, total: 3 }, version: 5 })]);
    const cancel = within(region()).getByRole('button', { name: 'Cancel' });
    await userEvent.click(cancel);
    expect(again.sent).toEqual([{ message_type: 'cancel_research', id: 7 }]);
  });

  it('focus on Cancel moves to the message box when the research ends', async () => {
    const { connect, region } = setup();
    const socket = connect([card({ stage: 'writing', version: 5 })]);
    within(region()).getByRole('button', { name: 'Cancel' }).focus();
    await userEvent.keyboard('{Enter}');
    socket.receive({ message_type: 'research', research: card({ stage: 'cancelled', version: 6 }) });
    expect(screen.getByRole('textbox', { name: 'Message' })).toHaveFocus();
  });
});
