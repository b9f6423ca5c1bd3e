// The chat's header: its title, an action of the page (search, onboarding's "Skip for now") and the
// connection's status pill.
import type { ReactNode } from 'react';
import type { ConnectionStatus } from './useChatSocket.ts';

export interface ChatHeaderProps {
  title: string;
  subtitle: string;
  /** Before the status; nothing once the conversation is over. */
  action?: ReactNode;
  statusKind: ConnectionStatus;
  statusText: string;
}

export function ChatHeader({ title, subtitle, action, statusKind, statusText }: ChatHeaderProps) {
  return (
    <header className="chat-header">
      <div className="chat-header-inner">
        <div>
          <h1 className="chat-title">{title}</h1>
          <p className="chat-subtitle">{subtitle}</p>
        </div>
        {action && <div className="chat-header-action">{action}</div>}
        <span className={`chat-status chat-status-${statusKind}`}>
          <span className="chat-status-dot" aria-hidden="true" />
          {statusText}
        </span>
      </div>
    </header>
  );
}
