// What travels on the realtime bus, apart from the carriers (realtime.bus.ts) so their parts can name it.
import type { TChatChannel, TServerEvent } from '@daybook/contracts';
import type { EndedSessions } from '../accounts/sessions.service.ts';

/** What travels on the bus; everything is plain JSON. */
export type RealtimeEvent =
  | { type: 'chat'; userId: number; channel: TChatChannel; event: TServerEvent }
  | { type: 'sessions-ended'; ended: EndedSessions }
  | { type: 'user-settings'; userId: number; settings: Record<string, unknown> }
  /** The user stopped an answer: the instance writing it ends it (see chat.hub.ts). */
  | { type: 'chat-stop'; userId: number; channel: TChatChannel; replyTo?: number; at?: number }
  /** A message is to be answered again, or that answer will not come: tabs that connect show it (see chat.hub.ts). */
  | { type: 'chat-awaiting'; userId: number; channel: TChatChannel; messageId: number; awaiting: boolean }
  /** A research was cancelled: the process running it stops at once (see research.service.ts). */
  | { type: 'research-cancel'; researchId: number };
