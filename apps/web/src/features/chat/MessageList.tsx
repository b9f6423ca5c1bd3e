// The scrolling message list: "Load earlier messages", the empty state, the messages by day, what
// follows them, and the "New messages" button that brings the end back into view.
import type { ComponentProps, ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { BrandMark } from '../../components/BrandMark.tsx';
import { Loading } from '../../components/Loading.tsx';
import type { DayGroup } from '../../lib/dates.ts';
import type { ChatChannel } from './api.ts';
import { ChatMessage } from './ChatMessage.tsx';
import type { ChatItem } from './chat.state.ts';
import type { MessageListControls } from './useMessageList.ts';

/** What a message shows besides itself: its highlight, which answer it is, its buttons. */
export type MessageProps = Omit<ComponentProps<typeof ChatMessage>, 'item'>;

export interface MessageListProps {
  list: MessageListControls;
  channel: ChatChannel;
  hasMore: boolean;
  /** The first history is on its way. */
  loading: boolean;
  /** The first history came, with no messages. */
  empty: boolean;
  days: DayGroup<ChatItem>[];
  messageProps: (item: ChatItem) => MessageProps;
  /** Daybook is replying and no answer is being written yet: the typing dots. */
  typing: boolean;
  /** After the messages, before the typing dots: the research cards. */
  children?: ReactNode;
}

export function MessageList({
  list,
  channel,
  hasMore,
  loading,
  empty,
  days,
  messageProps,
  typing,
  children,
}: MessageListProps) {
  return (
    <>
      <div
        ref={list.listRef}
        className="chat-scroll"
        onScroll={list.onScroll}
        role="log"
        aria-label="Messages"
        aria-relevant="additions"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region takes focus so the keyboard can scroll it (WCAG 2.1.1)
        tabIndex={0}
      >
        <div className="chat-thread">
          {hasMore && (
            <div className="chat-older">
              {list.loadingOlder ? (
                <Loading label="Loading earlier messages..." />
              ) : (
                <button type="button" className="chat-link-button" onClick={() => void list.loadOlder()}>
                  Load earlier messages
                </button>
              )}
            </div>
          )}
          {loading && <Loading label="Loading messages..." />}
          {empty && <EmptyChat channel={channel} />}
          {days.map((group) => (
            <div key={group.key} className="chat-day">
              <h2 className="chat-day-label">
                <time dateTime={group.day}>{group.label}</time>
              </h2>
              {group.items.map((item) => (
                <ChatMessage key={item.key} item={item} {...messageProps(item)} />
              ))}
            </div>
          ))}
          {children}
          {typing && (
            <div className="chat-row chat-row-assistant is-new">
              <div className="chat-bubble chat-typing" role="status" aria-label="Assistant is typing">
                <span className="chat-typing-dot" />
                <span className="chat-typing-dot" />
                <span className="chat-typing-dot" />
              </div>
            </div>
          )}
        </div>
      </div>

      {list.showJump && (
        <button type="button" className="chat-jump btn btn-primary btn-sm" onClick={list.scrollToBottom}>
          New messages ↓
        </button>
      )}
    </>
  );
}

function EmptyChat({ channel }: { channel: ChatChannel }) {
  if (channel === 'onboarding') {
    return (
      <div className="chat-empty">
        <p className="chat-empty-title">Say hello to get started.</p>
        <p>Tell your assistant a little about yourself: what you do, what you enjoy, what you want help with.</p>
      </div>
    );
  }
  return (
    <div className="chat-empty">
      <BrandMark />
      <p className="chat-empty-title">Your chat with Daybook</p>
      <p>
        Ask anything, or tell me about your day. I'll remember what matters; you can review it on your{' '}
        <Link to="/memories">Memories page</Link>.
      </p>
    </div>
  );
}
