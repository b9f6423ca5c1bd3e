// The socket hook after the server closes with 1008 (the session ended): it asks whether the
// browser is still signed in, and only retries if so. After 1012 (the server restarting) it
// reconnects at once, showing no outage.
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

describe('useChatSocket after a 1012 close (the server is restarting)', () => {
  it('reconnects at once, with no outage, countdown or error to show', () => {
    const { latest, sockets, timers, result } = setup();
    latest().open();
    latest().serverClose(1012);
    expect(sockets).toHaveLength(2);
    expect(timers.delays()).toEqual([]);
    expect(result.current).toMatchObject({
      status: 'connecting',
      outage: null,
      error: null,
      retryInMs: null,
      retryAt: null,
    });
    latest().open();
    expect(result.current).toMatchObject({ status: 'connected', outage: null, closeCode: null });
  });

  it('shows the outage, and backs off as usual, only once that attempt fails too', () => {
    const { latest, sockets, timers, result } = setup();
    latest().open();
    latest().serverClose(1012);
    // Nothing listens any more (one instance, restarting): the outage begins now.
    latest().serverClose(1006);
    expect(result.current).toMatchObject({ status: 'disconnected', outage: 'disconnected', retryInMs: 1_000 });
    timers.advance(1_000);
    expect(sockets).toHaveLength(3);
  });

  it('does not hammer a server that keeps closing with 1012 right after each open', () => {
    const { latest, sockets, result } = setup();
    for (let i = 0; i < 5; i++) {
      latest().open();
      latest().serverClose(1012);
    }
    // Four quick attempts in a row are a burst: the fifth close waits.
    expect(sockets).toHaveLength(5);
    expect(result.current.retryInMs).toBe(1_000);
    expect(result.current.outage).toBe('disconnected');
  });
});
