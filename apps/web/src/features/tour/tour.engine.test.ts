import { describe, expect, it } from 'vitest';
import { fakeTimers } from '../../test/socket.ts';
import { COLLAPSE_LINES, estimateLines } from '../chat/ChatMessage.tsx';
import {
  CONTINUE_DELAY_MS,
  createTourEngine,
  DIM_MS,
  MESSAGE_PAUSE_MS,
  MIN_HUMAN_PAUSE_MS,
  SENTENCE_PAUSE_MS,
  SPACE_PAUSE_MS,
  type TourState,
  TYPING_MAX_MS,
  TYPING_MIN_MS,
  typingDelays,
} from './tour.engine.ts';
import { TOUR_SCRIPT, type TourMessage, type TourStage } from './tour.script.ts';

const human = (text: string, pauseMs?: number): TourMessage => ({
  author: 'human',
  message_type: 'message',
  text,
  pauseMs,
});
const assistant = (text: string, pauseMs?: number): TourMessage => ({
  author: 'assistant',
  message_type: 'markdown',
  text,
  pauseMs,
});

const stage = (id: TourStage['id'], messages: TourMessage[]): TourStage => ({
  id,
  title: id,
  explanation: `About ${id}`,
  features: [`Feature of ${id}`],
  messages,
});

function setup(
  script: TourStage[],
  options: { random?: () => number; reducedMotion?: boolean; timeScale?: number } = {},
) {
  // A clock that only moves when told to, from 0.
  const clock = fakeTimers(0);
  const engine = createTourEngine({ script, clock, random: options.random ?? (() => 0), ...options });
  const states: Array<{ at: number; state: TourState }> = [];
  engine.subscribe((state) => states.push({ at: clock.now(), state }));
  engine.start();
  /** The first time `predicate` held. */
  const firstTime = (predicate: (state: TourState) => boolean) => states.find((s) => predicate(s.state))?.at;
  return { clock, engine, states, firstTime, state: () => engine.getState() };
}

describe('typingDelays', () => {
  it('gives each character 50 to 65 ms, more on spaces and most after a sentence end', () => {
    const text = 'Hi there. Yes! Ok? e.g. fine';
    for (const random of [() => 0, () => 0.5, () => 0.999999, Math.random]) {
      const delays = typingDelays(text, random);
      expect(delays).toHaveLength(text.length);
      Array.from(text).forEach((char, index) => {
        const delay = delays[index] ?? 0;
        const extra = char === ' ' ? SPACE_PAUSE_MS + (/[.!?]/.test(text[index - 1] ?? '') ? SENTENCE_PAUSE_MS : 0) : 0;
        expect(delay - extra).toBeGreaterThanOrEqual(TYPING_MIN_MS);
        expect(delay - extra).toBeLessThan(TYPING_MAX_MS);
      });
    }
  });

  it('draws a fresh random number per character, spread uniformly over the range', () => {
    const values = [0, 0.25, 0.5, 0.75];
    let call = 0;
    const delays = typingDelays('abcd', () => values[call++ % values.length] ?? 0);
    expect(delays).toEqual([50, 53.75, 57.5, 61.25]);
  });

  it('adds the space pause, and the sentence pause only to a space after . ! or ?', () => {
    const delays = typingDelays('a. b c!d', () => 0);
    expect(delays).toEqual([50, 50, 50 + SPACE_PAUSE_MS + SENTENCE_PAUSE_MS, 50, 50 + SPACE_PAUSE_MS, 50, 50, 50]);
    expect(SPACE_PAUSE_MS).toBeGreaterThan(0);
    expect(SENTENCE_PAUSE_MS).toBeGreaterThan(SPACE_PAUSE_MS);
  });

  it('counts an emoji as one character', () => {
    expect(typingDelays('a🙂', () => 0)).toHaveLength(2);
  });
});

describe('the tour engine', () => {
  it('shows the typing indicator for the message pause, then the whole assistant message', () => {
    const { clock, state } = setup([stage('welcome', [assistant('Hello Maya')])]);
    expect(state().typing).toBe(true);
    expect(state().messages).toHaveLength(0);
    clock.advance(MESSAGE_PAUSE_MS - 1);
    expect(state().messages).toHaveLength(0);
    clock.advance(1);
    expect(state().typing).toBe(false);
    expect(state().messages).toEqual([
      expect.objectContaining({ key: '0-0', shown: 'Hello Maya'.length, done: true, at: MESSAGE_PAUSE_MS }),
    ]);
  });

  it('waits at least 3 s before a human starts typing, then types character by character', () => {
    const { clock, state, states } = setup([stage('welcome', [human('Hi you', 500)])]);
    expect(state().typing).toBe(false);
    clock.advance(MIN_HUMAN_PAUSE_MS + TYPING_MIN_MS - 1);
    expect(state().messages).toHaveLength(0);
    clock.advance(1);
    expect(state().messages[0]).toMatchObject({ shown: 1, done: false });
    clock.advance(TYPING_MIN_MS);
    expect(state().messages[0]).toMatchObject({ shown: 2, done: false });
    clock.advance(TYPING_MIN_MS + SPACE_PAUSE_MS);
    expect(state().messages[0]).toMatchObject({ shown: 3 });
    clock.advance(3 * TYPING_MIN_MS);
    expect(state().messages[0]).toMatchObject({ shown: 6, done: true, at: MIN_HUMAN_PAUSE_MS + TYPING_MIN_MS });
    // Every intermediate length was shown, one character at a time.
    const shown = states.map((s) => s.state.messages[0]?.shown).filter((n) => n !== undefined);
    expect([...new Set(shown)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('plays messages in order with their pauses: 2 s default, 3 s minimum for humans, overrides honoured', () => {
    const { clock, firstTime } = setup(
      [
        stage('welcome', [
          assistant('One'),
          assistant('Two', 1200),
          human('x', 1000),
          human('y', 4000),
          assistant('Z'),
        ]),
      ],
      { random: () => 0 },
    );
    clock.advance(60_000);
    const appeared = (count: number) => firstTime((s) => s.messages.length === count) ?? Number.NaN;
    expect(appeared(1)).toBe(MESSAGE_PAUSE_MS);
    expect(appeared(2) - appeared(1)).toBe(1200);
    expect(appeared(3) - appeared(2)).toBe(MIN_HUMAN_PAUSE_MS + TYPING_MIN_MS);
    // 'x' finished typing as it appeared; then 4 s, then the first character of 'y'.
    expect(appeared(4) - appeared(3)).toBe(4000 + TYPING_MIN_MS);
    expect(appeared(5) - appeared(4)).toBe(MESSAGE_PAUSE_MS);
  });

  it('enables Continue exactly 3 s after the last message finishes, and not before', () => {
    const { clock, state, firstTime } = setup([stage('welcome', [assistant('Hello')]), stage('research', [])]);
    clock.advance(MESSAGE_PAUSE_MS);
    expect(state().stageComplete).toBe(true);
    expect(state().continueEnabled).toBe(false);
    clock.advance(CONTINUE_DELAY_MS - 1);
    expect(state().continueEnabled).toBe(false);
    expect(state().stageComplete).toBe(true);
    clock.advance(1);
    expect(state().continueEnabled).toBe(true);
    expect(firstTime((s) => s.continueEnabled)).toBe(MESSAGE_PAUSE_MS + CONTINUE_DELAY_MS);
  });

  it('waits for the last typed character before counting down to Continue', () => {
    const { clock, state } = setup([stage('welcome', [human('Hey')]), stage('research', [])]);
    const typed = MIN_HUMAN_PAUSE_MS + 3 * TYPING_MIN_MS;
    clock.advance(typed - 1);
    expect(state().messages[0]).toMatchObject({ shown: 2, done: false });
    clock.advance(1 + CONTINUE_DELAY_MS - 1);
    expect(state().continueEnabled).toBe(false);
    clock.advance(1);
    expect(state().continueEnabled).toBe(true);
  });

  it('ignores advance while the stage plays, then moves on and keeps the earlier messages', () => {
    const { clock, engine, state } = setup([
      stage('welcome', [assistant('First')]),
      stage('daily_insight', [assistant('Second')]),
    ]);
    expect(engine.advance()).toBe(false);
    clock.advance(MESSAGE_PAUSE_MS + CONTINUE_DELAY_MS);
    expect(state()).toMatchObject({ stageIndex: 0, isLastStage: false, continueEnabled: true });
    expect(engine.advance()).toBe(true);
    expect(state()).toMatchObject({ stageIndex: 1, isLastStage: true, continueEnabled: false, stageComplete: false });
    // A second press before the new stage is done does nothing.
    expect(engine.advance()).toBe(false);
    // The new stage starts after the previous one has dimmed.
    clock.advance(Math.max(MESSAGE_PAUSE_MS, DIM_MS));
    expect(state().messages.map((m) => [m.stageIndex, m.message.text])).toEqual([
      [0, 'First'],
      [1, 'Second'],
    ]);
  });

  it('on the last stage enables Continue but does not advance past it', () => {
    const { clock, engine, state } = setup([stage('wrap_up', [assistant('Bye')])]);
    expect(state().isLastStage).toBe(true);
    clock.advance(MESSAGE_PAUSE_MS + CONTINUE_DELAY_MS);
    expect(state().continueEnabled).toBe(true);
    expect(engine.advance()).toBe(false);
    expect(state().stageIndex).toBe(0);
    expect(clock.delays().length).toBe(0);
  });

  it('with reduced motion shows whole human messages at once, still in order', () => {
    const { clock, state } = setup([stage('welcome', [assistant('Hello'), human('I am typing nothing.')])], {
      reducedMotion: true,
    });
    clock.advance(MESSAGE_PAUSE_MS + MIN_HUMAN_PAUSE_MS - 1);
    expect(state().messages).toHaveLength(1);
    clock.advance(1);
    expect(state().messages[1]).toMatchObject({ shown: 'I am typing nothing.'.length, done: true });
    clock.advance(CONTINUE_DELAY_MS);
    expect(state().continueEnabled).toBe(true);
  });

  it('multiplies every delay by the time scale', () => {
    const { clock, state } = setup([stage('welcome', [assistant('A'), human('ab')])], { timeScale: 0.01 });
    clock.advance(MESSAGE_PAUSE_MS * 0.01);
    expect(state().messages).toHaveLength(1);
    clock.advance((MIN_HUMAN_PAUSE_MS + 2 * TYPING_MIN_MS) * 0.01);
    expect(state().messages[1]).toMatchObject({ shown: 2, done: true });
    clock.advance(CONTINUE_DELAY_MS * 0.01 - 1);
    expect(state().continueEnabled).toBe(false);
    clock.advance(1);
    expect(state().continueEnabled).toBe(true);
  });

  it('stops its timer on dispose and restarts cleanly on start', () => {
    const { clock, engine, state } = setup([stage('welcome', [assistant('Hello')])]);
    engine.dispose();
    expect(clock.delays().length).toBe(0);
    engine.start();
    expect(state().messages).toHaveLength(0);
    expect(clock.delays().length).toBe(1);
  });

  it('plays the real script through all four stages', () => {
    const { clock, engine, state } = setup([...TOUR_SCRIPT], { random: Math.random });
    const seen: string[] = [];
    for (;;) {
      clock.advance(120_000);
      expect(state().continueEnabled).toBe(true);
      seen.push(TOUR_SCRIPT[state().stageIndex]?.id ?? '');
      if (!engine.advance()) break;
    }
    expect(seen).toEqual(['welcome', 'daily_insight', 'research', 'wrap_up']);
    expect(state().messages).toHaveLength(TOUR_SCRIPT.reduce((sum, s) => sum + s.messages.length, 0));
    expect(state().messages.every((m) => m.done)).toBe(true);
  });
});

describe('the script', () => {
  it('has the four stages in order, each with an explanation, features and messages', () => {
    expect(TOUR_SCRIPT.map((s) => s.id)).toEqual(['welcome', 'daily_insight', 'research', 'wrap_up']);
    for (const s of TOUR_SCRIPT) {
      expect(s.title).not.toBe('');
      expect(s.explanation.length).toBeGreaterThan(40);
      expect(s.features.length).toBeGreaterThan(0);
      expect(s.messages.length).toBeGreaterThan(0);
    }
  });

  it('includes a research report with sources and a Remembered notification', () => {
    const messages = TOUR_SCRIPT.flatMap((s) => s.messages);
    const report = messages.find((m) => m.message_type === 'research_report');
    const parsed = JSON.parse(report?.text ?? '{}');
    expect(parsed.introduction).toBeTruthy();
    expect(parsed.conclusion).toBeTruthy();
    expect(parsed.sources.length).toBeGreaterThanOrEqual(3);
    for (const source of parsed.sources) expect(source.url).toMatch(/^https:\/\//);
    // The daily message shows in full, without the chat's Read more... fold.
    const daily = TOUR_SCRIPT.find((s) => s.id === 'daily_insight')?.messages.find((m) => m.author === 'assistant');
    expect(estimateLines(daily?.text ?? '')).toBeLessThanOrEqual(COLLAPSE_LINES);
    expect(messages.some((m) => m.message_type === 'task_notification_final' && /^Remembered: /.test(m.text))).toBe(
      true,
    );
  });
});
