// What takes the message box's place once onboarding is over: a link on to the chat or, right after
// onboarding's closing message, a notice while the page goes on by itself.
import { ONBOARDING_FINISHED } from '@daybook/contracts';
import type { RefObject } from 'react';
import { Link } from 'react-router-dom';

export const ONBOARDING_DONE = "You're all set! Taking you to your chat...";

export interface OnboardingFinishProps {
  /** The id of the text the button or link is described by. */
  textId: string;
  /** Onboarding's closing message just came: the page goes on by itself (the notice and "Go to chat now"). */
  leaving: boolean;
  chatLinkRef: RefObject<HTMLAnchorElement | null>;
  finishButtonRef: RefObject<HTMLButtonElement | null>;
  onGoNow: () => void;
}

export function OnboardingFinish({ textId, leaving, chatLinkRef, finishButtonRef, onGoNow }: OnboardingFinishProps) {
  if (!leaving) {
    return (
      <div className="chat-composer chat-finish">
        <div className="chat-composer-inner chat-finish-inner">
          <p id={textId} className="chat-finish-text">
            {ONBOARDING_FINISHED}
          </p>
          <Link ref={chatLinkRef} to="/chat" className="btn btn-primary" aria-describedby={textId}>
            Go to chat
          </Link>
        </div>
      </div>
    );
  }
  return (
    <div className="chat-composer chat-finish">
      <div className="chat-composer-inner chat-finish-inner">
        <p id={textId} className="chat-finish-text" role="status">
          <svg className="chat-finish-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
            <circle cx="10" cy="10" r="10" fill="currentColor" />
            <path d="m5.8 10.4 2.8 2.8 5.6-6" fill="none" stroke="#fff" strokeWidth="2" strokeLinecap="round" />
          </svg>
          {ONBOARDING_DONE}
        </p>
        <button
          ref={finishButtonRef}
          type="button"
          className="btn btn-primary"
          aria-describedby={textId}
          onClick={onGoNow}
        >
          Go to chat now
        </button>
      </div>
    </div>
  );
}
