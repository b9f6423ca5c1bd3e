// The socket hook after the server closes with 1008 (the session ended): it asks whether the
// browser is still signed in, and only retries if so.
import { renderHook, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fakeTimers, fakeWebSocketClass } from '../../test/socket.ts';
import { useChatSocket } from './useChatSocket.ts';

function setup(checkSession?: () => Promise<boolean>) {
  const socketClass = fakeWebSocketClass();
  const timers = fakeTimers();
  const hook = renderHook(() =>
    useChatSocket({
      url: 'ws://daybook.test/ws/chat/',
      onEvent: () => {},
      checkSession,
      WebSocketImpl: socketClass.WebSocketImpl,
      timers,
    }),
  );
  return { ...socketClass, timers, result: hook.result };
}

describe('useChatSocket after a 1008 close', () => {
  it('checks the session once and stops retrying when it has ended', async () => {
    const checkSession = vi.fn(async () => false);
    const { latest, sockets, timers, result } = setup(checkSession);
    latest().open();
    latest().serverClose(1008);
    await waitFor(() => expect(result.current.signedOut).toBe(true));
    expect(checkSession).toHaveBeenCalledTimes(1);
    expect(result.current.retryAt).toBeNull();
    expect(timers.delays()).toEqual([]);
    timers.advance(120_000);
    expect(sockets).toHaveLength(1);
  });

  it('retries after 5 s while still signed in (the socket outlived a rotated session key)', async () => {
    const checkSession = vi.fn(async () => true);
    const { latest, sockets, timers, result } = setup(checkSession);
    latest().open();
    latest().serverClose(1008);
    await waitFor(() => expect(result.current.retryInMs).toBe(5_000));
    expect(result.current.signedOut).toBe(false);
    timers.advance(5_000);
    expect(sockets).toHaveLength(2);
  });

  it('retries when the check itself fails (the server is unreachable, not a sign-out)', async () => {
    const { latest, result } = setup(() => Promise.reject(new Error('offline')));
    latest().open();
    latest().serverClose(1008);
    await waitFor(() => expect(result.current.retryInMs).toBe(5_000));
    expect(result.current.signedOut).toBe(false);
  });

  it('does not ask about the session after other close codes', async () => {
    const checkSession = vi.fn(async () => false);
    const { latest, result } = setup(checkSession);
    latest().open();
    latest().serverClose(1013);
    expect(result.current.retryInMs).toBe(15_000);
    expect(checkSession).not.toHaveBeenCalled();
  });
});
