// A fake WebSocket class and hand-driven timers for the chat tests.
import { act } from '@testing-library/react';
import type { SocketLike, Timers } from '../features/chat/useChatSocket.ts';

export interface FakeSocket extends SocketLike {
  url: string;
  /** Frames the client sent, parsed (its liveness pings aside: see `pings`). */
  sent: unknown[];
  /** Liveness pings the client sent. */
  pings: number;
  /** Like a server that went quiet (a dead network): it answers nothing, pings included. */
  stalled: boolean;
  closedWith: number | null;
  open(): void;
  receive(data: unknown): void;
  serverClose(code: number): void;
  fail(): void;
}

/** A fresh WebSocket class per test; `sockets` lists every instance in creation order. */
export function fakeWebSocketClass({ sendThrows = false } = {}) {
  const sockets: FakeSocket[] = [];
  class FakeWebSocket implements FakeSocket {
    readyState = 0;
    onopen: SocketLike['onopen'] = null;
    onmessage: SocketLike['onmessage'] = null;
    onerror: SocketLike['onerror'] = null;
    onclose: SocketLike['onclose'] = null;
    sent: unknown[] = [];
    pings = 0;
    stalled = false;
    closedWith: number | null = null;
    constructor(readonly url: string) {
      sockets.push(this);
    }
    send(data: string) {
      if (sendThrows) throw new Error('send failed');
      const frame = JSON.parse(data) as { message_type?: string };
      if (frame.message_type !== 'ping') {
        this.sent.push(frame);
        return;
      }
      this.pings++;
      // A live server answers at once (the client changes no state for it, so no act() is needed).
      if (!this.stalled) this.onmessage?.({ data: JSON.stringify({ message_type: 'pong' }) } as MessageEvent);
    }
    close(code = 1000) {
      this.readyState = 3;
      this.closedWith = code;
    }
    open() {
      act(() => {
        this.readyState = 1;
        this.onopen?.(new Event('open'));
      });
    }
    receive(data: unknown) {
      act(() => {
        this.onmessage?.({ data: typeof data === 'string' ? data : JSON.stringify(data) } as MessageEvent);
      });
    }
    serverClose(code: number) {
      act(() => {
        this.readyState = 3;
        this.onclose?.({ code } as CloseEvent);
      });
    }
    fail() {
      act(() => {
        this.onerror?.(new Event('error'));
      });
    }
  }
  const latest = () => {
    const socket = sockets[sockets.length - 1];
    if (!socket) throw new Error('no socket was opened');
    return socket;
  };
  return { WebSocketImpl: FakeWebSocket, sockets, latest };
}

/** Timers that only move when `advance` is called. */
export function fakeTimers(start = Date.UTC(2025, 5, 2, 12, 0, 0)) {
  let now = start;
  let nextHandle = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  const timers: Timers & { advance(ms: number): void; delays(): number[] } = {
    setTimeout(callback, ms) {
      const handle = ++nextHandle;
      pending.set(handle, { at: now + ms, callback });
      return handle;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
    now: () => now,
    /** Remaining delays of the scheduled timers, soonest first. */
    delays: () => [...pending.values()].map((t) => t.at - now).sort((a, b) => a - b),
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        pending.delete(due[0]);
        now = due[1].at;
        act(() => due[1].callback());
      }
      now = until;
    },
  };
  return timers;
}
