// Plays a tour script in time: typing indicators, human messages typed character by character,
// pauses, and when Continue becomes available. Pure and free of React, so tests drive it with a fake clock.
import type { TourMessage, TourStage } from './tour.script.ts';

/** Each typed character takes between these two, chosen uniformly at random. */
export const TYPING_MIN_MS = 50;
export const TYPING_MAX_MS = 65;
/** Extra time before typing a space, and more again when the space ends a sentence. */
export const SPACE_PAUSE_MS = 40;
export const SENTENCE_PAUSE_MS = 300;
/** Time before a message appears, unless the script overrides it (assistant messages show the typing indicator meanwhile). */
export const MESSAGE_PAUSE_MS = 2000;
/** A human message never starts typing sooner than this after the previous message. */
export const MIN_HUMAN_PAUSE_MS = 3000;
/** Continue turns on this long after the stage's last message has finished. */
export const CONTINUE_DELAY_MS = 3000;
/** The previous stage's messages fade to dim over this long; the next stage's first message waits for it. */
export const DIM_MS = 2000;
/** At this width or narrower the sidebar hides and a compact progress line shows instead. */
export const NARROW_BREAKPOINT = 768;

export interface TourClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface TourVisibleMessage {
  /** Stable React key: `<stage>-<message>`. */
  key: string;
  stageIndex: number;
  message: TourMessage;
  /** Characters (code points) shown so far. */
  shown: number;
  /** Every character is shown. */
  done: boolean;
  /** Clock time the message appeared. */
  at: number;
}

export interface TourState {
  stageIndex: number;
  stageCount: number;
  isLastStage: boolean;
  /** Every message shown so far, earlier stages included. */
  messages: readonly TourVisibleMessage[];
  /** The assistant typing indicator shows. */
  typing: boolean;
  /** Every message of the current stage has finished. */
  stageComplete: boolean;
  continueEnabled: boolean;
}

export interface TourEngineOptions {
  script: readonly TourStage[];
  clock: TourClock;
  /** Returns a number in [0, 1); Math.random by default. */
  random?: () => number;
  /** Messages appear whole instead of being typed. */
  reducedMotion?: boolean;
  /** Every delay is multiplied by this (1 = real time). */
  timeScale?: number;
}

export type TourEngine = ReturnType<typeof createTourEngine>;

const chars = (text: string) => Array.from(text);

/** The first `shown` characters of `text`, counted in code points like the engine does. */
export const visibleText = (text: string, shown: number) => chars(text).slice(0, shown).join('');

/** Milliseconds to wait before typing each character of `text`. */
export function typingDelays(text: string, random: () => number = Math.random): number[] {
  const list = chars(text);
  return list.map((char, index) => {
    let delay = TYPING_MIN_MS + random() * (TYPING_MAX_MS - TYPING_MIN_MS);
    if (/\s/.test(char)) {
      delay += SPACE_PAUSE_MS;
      if (/[.!?]/.test(list[index - 1] ?? '')) delay += SENTENCE_PAUSE_MS;
    }
    return delay;
  });
}

/** How long to wait before `message` starts (typing indicator or typing). */
export function pauseBefore(message: TourMessage): number {
  const pause = message.pauseMs ?? MESSAGE_PAUSE_MS;
  return message.author === 'human' ? Math.max(pause, MIN_HUMAN_PAUSE_MS) : pause;
}

/** Assistant messages get a typing indicator; notifications just appear. */
const showsTypingIndicator = (message: TourMessage) =>
  message.author === 'assistant' && message.message_type !== 'task_notification_final';

export function initialTourState(script: readonly TourStage[]): TourState {
  return {
    stageIndex: 0,
    stageCount: script.length,
    isLastStage: script.length <= 1,
    messages: [],
    typing: false,
    stageComplete: false,
    continueEnabled: false,
  };
}

export function createTourEngine({
  script,
  clock,
  random = Math.random,
  reducedMotion = false,
  timeScale = 1,
}: TourEngineOptions) {
  let state = initialTourState(script);
  let handle: unknown = null;
  const listeners = new Set<(state: TourState) => void>();

  const update = (patch: Partial<TourState>) => {
    state = { ...state, ...patch };
    for (const listener of listeners) listener(state);
  };

  const cancel = () => {
    if (handle !== null) clock.clearTimeout(handle);
    handle = null;
  };

  // Only one step is ever pending: each step schedules the next.
  const after = (ms: number, step: () => void) => {
    handle = clock.setTimeout(() => {
      handle = null;
      step();
    }, ms * timeScale);
  };

  const show = (stageIndex: number, messageIndex: number, message: TourMessage, shown: number) => {
    const item: TourVisibleMessage = {
      key: `${stageIndex}-${messageIndex}`,
      stageIndex,
      message,
      shown,
      done: shown >= chars(message.text).length,
      at: clock.now(),
    };
    const last = state.messages[state.messages.length - 1];
    const messages =
      last?.key === item.key ? [...state.messages.slice(0, -1), { ...item, at: last.at }] : [...state.messages, item];
    update({ messages, typing: false });
    return item.done;
  };

  const type = (stageIndex: number, messageIndex: number, message: TourMessage) => {
    const next = () => play(stageIndex, messageIndex + 1);
    const length = chars(message.text).length;
    if (reducedMotion || length === 0) {
      show(stageIndex, messageIndex, message, length);
      next();
      return;
    }
    const delays = typingDelays(message.text, random);
    const typeFrom = (shown: number) =>
      after(delays[shown] ?? TYPING_MIN_MS, () => {
        if (show(stageIndex, messageIndex, message, shown + 1)) next();
        else typeFrom(shown + 1);
      });
    typeFrom(0);
  };

  const play = (stageIndex: number, messageIndex: number) => {
    const message = script[stageIndex]?.messages[messageIndex];
    if (!message) {
      update({ stageComplete: true, typing: false });
      after(CONTINUE_DELAY_MS, () => update({ continueEnabled: true }));
      return;
    }
    let pause = pauseBefore(message);
    if (messageIndex === 0 && stageIndex > 0) pause = Math.max(pause, DIM_MS);
    if (message.author === 'human') {
      after(pause, () => type(stageIndex, messageIndex, message));
      return;
    }
    if (showsTypingIndicator(message)) update({ typing: true });
    after(pause, () => {
      show(stageIndex, messageIndex, message, chars(message.text).length);
      play(stageIndex, messageIndex + 1);
    });
  };

  const startStage = (stageIndex: number) => {
    update({
      stageIndex,
      isLastStage: stageIndex >= script.length - 1,
      stageComplete: false,
      continueEnabled: false,
      typing: false,
    });
    play(stageIndex, 0);
  };

  return {
    getState: () => state,
    /** Calls `listener` with every new state; returns the unsubscribe function. */
    subscribe(listener: (state: TourState) => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    /** Plays the tour from the first stage (again). */
    start() {
      cancel();
      state = initialTourState(script);
      if (script.length > 0) startStage(0);
    },
    /** Moves to the next stage when Continue is enabled; false on the last stage or while the stage plays. */
    advance(): boolean {
      if (!state.continueEnabled || state.isLastStage) return false;
      cancel();
      startStage(state.stageIndex + 1);
      return true;
    },
    dispose() {
      cancel();
      listeners.clear();
    },
  };
}
