// The message box: its draft (kept across reloads), sending with Enter or the Send button, Stop while
// an answer is on its way (Escape too), and the counter near the length limit.
import { CHAT_TEXT_MAX, CHAT_TOO_LONG } from '@daybook/contracts';
import type { KeyboardEvent, RefObject } from 'react';
import type { ChatChannel } from './api.ts';
import { StopIcon } from './ChatMessage.tsx';
import { useDraft } from './useDraft.ts';

export const STOP = 'Stop';
/** The character counter shows from here on. */
const COUNTER_FROM = CHAT_TEXT_MAX - 1_000;

export interface ComposerProps {
  channel: ChatChannel;
  /** The message box's id: the page's "Skip to message box" link points at it. */
  textareaId: string;
  counterId: string;
  textareaRef: RefObject<HTMLTextAreaElement | null>;
  canSend: boolean;
  /** Sends `text` as a new message; false when it could not go out (the draft then stays). */
  onSend: (text: string) => boolean;
  setNotice: (notice: string) => void;
  /** An answer is on its way (here or in another tab): Stop is offered. */
  answering: boolean;
  stopDisabled: boolean;
  onStop: () => void;
  /** Focus moved onto Stop (true) or away from it (false). */
  onStopFocus: (focused: boolean) => void;
}

export function Composer({
  channel,
  textareaId,
  counterId,
  textareaRef,
  canSend,
  onSend,
  setNotice,
  answering,
  stopDisabled,
  onStop,
  onStopFocus,
}: ComposerProps) {
  const [draft, setDraft] = useDraft(channel);
  const submit = () => {
    const text = draft.trim();
    if (!text || !canSend) return;
    if (text.length > CHAT_TEXT_MAX) {
      setNotice(CHAT_TOO_LONG);
      return;
    }
    if (onSend(text)) setDraft('');
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape' && answering) {
      event.preventDefault();
      onStop();
      return;
    }
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    submit();
  };

  const showCounter = draft.length >= COUNTER_FROM;
  // Text over the limit is kept (pasting never cuts it); the counter says how much to remove.
  const tooLong = draft.trim().length > CHAT_TEXT_MAX;

  return (
    <form
      className="chat-composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <div className="chat-composer-inner">
        <label htmlFor={textareaId} className="visually-hidden">
          Message
        </label>
        <textarea
          ref={textareaRef}
          id={textareaId}
          className="chat-input"
          rows={3}
          placeholder="Type your message..."
          value={draft}
          disabled={!canSend}
          aria-describedby={showCounter ? counterId : undefined}
          aria-invalid={tooLong || undefined}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
        />
        {answering && (
          <button
            type="button"
            className="btn btn-secondary chat-stop"
            aria-disabled={stopDisabled || undefined}
            aria-keyshortcuts="Escape"
            title="Stop (Esc)"
            onFocus={() => onStopFocus(true)}
            onBlur={() => onStopFocus(false)}
            onClick={onStop}
          >
            <StopIcon />
            <span className="chat-stop-label">{STOP}</span>
          </button>
        )}
        <button type="submit" className="btn btn-primary chat-send" disabled={!canSend || tooLong}>
          Send
        </button>
      </div>
      {/* Announced when it happens (a paste can overshoot); the counter itself only describes the box. */}
      <p className="visually-hidden" aria-live="polite">
        {tooLong ? CHAT_TOO_LONG : ''}
      </p>
      {showCounter && (
        <p id={counterId} className={`chat-counter${draft.length >= CHAT_TEXT_MAX ? ' is-full' : ''}`}>
          {tooLong && `${CHAT_TOO_LONG} `}
          <span className="chat-counter-count">
            {draft.length.toLocaleString('en-US')} / {CHAT_TEXT_MAX.toLocaleString('en-US')}
          </span>
        </p>
      )}
    </form>
  );
}
