// The browser's WebSocket and timers as the chat socket uses them: injectable, so tests drive them
// by hand. Also how a server frame is read.
import { type TServerEvent, ZServerEvent } from '@daybook/contracts';

export const CONNECTING = 0;
export const OPEN = 1;

/** The part of the browser WebSocket the hook uses. */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type SocketConstructor = new (url: string) => SocketLike;

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export const browserTimers: Timers = {
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: (handle) => window.clearTimeout(handle as number),
  now: () => Date.now(),
};

/** Stops a socket's handlers from reaching the hook (it is being dropped). */
export function detach(ws: SocketLike) {
  ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
}

/** A frame from the server as an event (a ping's answer included); null when it is not JSON or not a known event. */
export function parseFrame(data: unknown): TServerEvent | null {
  let parsed: ReturnType<typeof ZServerEvent.safeParse> | null = null;
  try {
    parsed = ZServerEvent.safeParse(JSON.parse(String(data)));
  } catch {
    parsed = null;
  }
  return parsed?.success ? parsed.data : null;
}
