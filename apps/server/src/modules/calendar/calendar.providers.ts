// The OAuth providers this installation enabled: each one's client, endpoints and calendar API, and
// what talking to their token endpoints shares (scopes, revocation, failures without secrets).
import { ArcticFetchError, OAuth2Client, OAuth2RequestError } from 'arctic';
import { withTimeout } from './calendar.timeout.ts';
import { type CalendarApi, type OAuthEndpoints, type OAuthProviderId, ProviderApiError } from './calendar.types.ts';
import { createGoogleCalendarApi } from './providers/google.ts';
import { createMicrosoftCalendarApi } from './providers/microsoft.ts';

/** The real endpoints; tests replace them through AppDeps only. */
export function defaultEndpoints(tenant = 'common'): Record<OAuthProviderId, OAuthEndpoints> {
  return {
    google: {
      authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      revokeUrl: 'https://oauth2.googleapis.com/revoke',
      apiUrl: 'https://www.googleapis.com/calendar/v3',
    },
    microsoft: {
      authorizeUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
      tokenUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
      apiUrl: 'https://graph.microsoft.com/v1.0',
    },
  };
}

/** Read-only scopes, plus what keeps access working while the user is away. */
export const SCOPES: Record<OAuthProviderId, string[]> = {
  google: ['https://www.googleapis.com/auth/calendar.readonly'],
  microsoft: ['offline_access', 'Calendars.ReadBasic'],
};
export const EXTRA_AUTHORIZE_PARAMS: Record<OAuthProviderId, Record<string, string>> = {
  // offline + consent: Google sends a refresh token every time, also when reconnecting.
  google: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  microsoft: { prompt: 'select_account' },
};

export interface OAuthProvider {
  client: OAuth2Client;
  endpoints: OAuthEndpoints;
  api: CalendarApi;
  clientId: string;
}
export type OAuthProviders = ReadonlyMap<OAuthProviderId, OAuthProvider>;

export interface OAuthProvidersDeps {
  publicUrl: string;
  clients: {
    google?: { clientId: string; clientSecret: string };
    microsoft?: { clientId: string; clientSecret: string; tenant: string };
  };
  /** Test configuration only: local fakes of the providers. */
  endpoints?: Partial<Record<OAuthProviderId, OAuthEndpoints>>;
  /** Calendar API requests. */
  timeoutMs: number;
}

/** One entry for each provider with a client id and secret. */
export function createOAuthProviders(deps: OAuthProvidersDeps): OAuthProviders {
  const oauth = new Map<OAuthProviderId, OAuthProvider>();
  for (const id of ['google', 'microsoft'] as const) {
    const creds = deps.clients[id];
    if (!creds) continue;
    const tenant = id === 'microsoft' ? (deps.clients.microsoft?.tenant ?? 'common') : 'common';
    const endpoints = deps.endpoints?.[id] ?? defaultEndpoints(tenant)[id];
    const redirectUri = `${deps.publicUrl}/accounts/${id}/login/callback/`;
    const api =
      id === 'google'
        ? createGoogleCalendarApi({ apiUrl: endpoints.apiUrl, timeoutMs: deps.timeoutMs })
        : createMicrosoftCalendarApi({ apiUrl: endpoints.apiUrl, timeoutMs: deps.timeoutMs });
    oauth.set(id, {
      client: new OAuth2Client(creds.clientId, creds.clientSecret, redirectUri),
      endpoints,
      api,
      clientId: creds.clientId,
    });
  }
  return oauth;
}

export async function revokeToken(
  provider: { client: OAuth2Client; endpoints: OAuthEndpoints },
  token: string,
  timeoutMs: number,
) {
  if (!provider.endpoints.revokeUrl) return;
  await withTimeout(
    provider.client.revokeToken(provider.endpoints.revokeUrl, token),
    timeoutMs,
    'The token revocation',
  );
}

export function expiresAtOf(tokens: { accessTokenExpiresAt(): Date }): number | null {
  try {
    return tokens.accessTokenExpiresAt().getTime();
  } catch {
    return null;
  }
}

/** Provider failures in words that name no token and no personal data. */
export function transient(err: unknown): ProviderApiError {
  if (err instanceof ProviderApiError) return err;
  if (err instanceof OAuth2RequestError)
    return new ProviderApiError('unavailable', `token endpoint refused: ${err.code}`);
  if (err instanceof ArcticFetchError) return new ProviderApiError('unavailable', 'token endpoint unreachable');
  const status = (err as { status?: unknown }).status;
  return new ProviderApiError(
    'unavailable',
    `token endpoint failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}`,
  );
}
