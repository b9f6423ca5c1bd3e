// What a connection keeps sealed at rest (OAuth tokens, an ICS address), and opening it again.
import { type SecretBox, SecretBoxError } from '../../lib/secret-box.ts';
import { MESSAGES } from './calendar.messages.ts';
import type { ConnectionRow } from './calendar.repo.ts';

export interface OAuthSecret {
  access: string;
  refresh: string | null;
  /** ms since epoch; null when the provider did not say. */
  expiresAt: number | null;
}
export interface IcsSecret {
  url: string;
}

/** The connection can no longer be read until its owner connects it again. */
export class NeedsReconnect extends Error {
  constructor(
    readonly reason: string,
    /** The row already says so (another process, or the refresh that found it). */
    readonly recorded = false,
  ) {
    super(reason);
  }
}

/** A connection's sealed secret; one sealed under another SECRET_KEY means reconnecting. */
export function openSecret<T extends OAuthSecret | IcsSecret>(box: SecretBox, row: ConnectionRow): T {
  try {
    return box.openJson<T>(row.secret);
  } catch (err) {
    if (err instanceof SecretBoxError) throw new NeedsReconnect(MESSAGES.keyChanged);
    throw err;
  }
}

export const openTokens = (box: SecretBox, row: ConnectionRow) => openSecret<OAuthSecret>(box, row);
