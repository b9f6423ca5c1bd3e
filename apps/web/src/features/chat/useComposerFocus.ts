// Where keyboard focus goes as the controls around the message box come and go: into the box once
// connected, back to it when Stop or a research's Cancel goes away, and to what takes the box's place
// when onboarding ends. Also the "Skip to message box" link.
import { type MouseEvent, useEffect, useRef } from 'react';
import type { ResearchCards } from './research.cards.ts';

/** True for a device whose main pointer is precise (mouse, trackpad): focusing a field there opens no keyboard. */
const hasFinePointer = () => typeof window.matchMedia === 'function' && window.matchMedia('(pointer: fine)').matches;

export interface ComposerFocusOptions {
  canSend: boolean;
  /** The conversation is over (finished onboarding): the chat link stands where the box was. */
  done: boolean;
  /** Onboarding's end is under way: its notice and button stand where the box was. */
  finishTarget: string | null;
  /** An answer is on its way: Stop is offered. */
  answering: boolean;
  /** The research cards: a change may take away the Cancel that had focus. */
  researchCards: ResearchCards['cards'];
}

export function useComposerFocus({ canSend, done, finishTarget, answering, researchCards }: ComposerFocusOptions) {
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const finishButtonRef = useRef<HTMLButtonElement>(null);
  const chatLinkRef = useRef<HTMLAnchorElement>(null);

  // Cancel goes away with its card's run: focus that was on it moves to the message box.
  const cancelFocused = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the cards change
  useEffect(() => {
    if (!cancelFocused.current) return;
    if (document.activeElement !== document.body && document.activeElement !== null) return;
    cancelFocused.current = false;
    textareaRef.current?.focus();
  }, [researchCards]);

  // Stop goes away with the answer: focus that was on it moves to the message box.
  const stopFocused = useRef(false);
  useEffect(() => {
    if (answering || !stopFocused.current) return;
    stopFocused.current = false;
    if (document.activeElement === document.body || document.activeElement === null) textareaRef.current?.focus();
  }, [answering]);

  // Once connected, keyboard users start in the message box, unless they are already somewhere else.
  // Phones (no fine pointer) are left alone: focusing would pop up the keyboard over the history.
  const autoFocused = useRef(false);
  useEffect(() => {
    if (!canSend || autoFocused.current) return;
    autoFocused.current = true;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    if (hasFinePointer()) textareaRef.current?.focus({ preventScroll: true });
  }, [canSend]);

  // Finished onboarding puts the chat link where the message box was; focus that was there follows.
  useEffect(() => {
    if (!done) return;
    const active = document.activeElement;
    if (!active || active === document.body) chatLinkRef.current?.focus({ preventScroll: true });
  }, [done]);

  // The message box makes way for the end-of-onboarding notice; focus that was in it goes to its button.
  useEffect(() => {
    if (finishTarget === null) return;
    const active = document.activeElement;
    if (!active || active === document.body) finishButtonRef.current?.focus({ preventScroll: true });
  }, [finishTarget]);

  const skipToComposer = (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    (textareaRef.current ?? finishButtonRef.current ?? chatLinkRef.current)?.focus();
  };
  const onCancelFocus = (focused: boolean) => {
    cancelFocused.current = focused;
  };
  const onStopFocus = (focused: boolean) => {
    stopFocused.current = focused;
  };

  return { textareaRef, finishButtonRef, chatLinkRef, skipToComposer, onCancelFocus, onStopFocus };
}
