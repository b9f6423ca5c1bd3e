import { type TSiteInfo, ZSiteInfo } from '@daybook/contracts';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { apiRequest } from './api.ts';

export type SiteState = { status: 'loading' } | { status: 'ready'; site: TSiteInfo } | { status: 'error' };

const SiteContext = createContext<SiteState>({ status: 'loading' });

const loadSite = (signal?: AbortSignal) => apiRequest('/api/site/', ZSiteInfo, { signal });
let early: Promise<TSiteInfo> | null = null;

/**
 * Asks for the site's details before React starts (main.tsx); the provider takes this answer once.
 * Resolves with the state to start from once the answer is in (an error leaves the provider to ask).
 */
export function loadSiteEarly(): Promise<SiteState | undefined> {
  early ??= loadSite();
  return early.then(
    (site): SiteState => ({ status: 'ready', site }),
    () => undefined,
  );
}

export function SiteProvider({ children, initial }: { children: ReactNode; initial?: SiteState }) {
  const [state, setState] = useState<SiteState>(initial ?? { status: 'loading' });
  useEffect(() => {
    if (initial) return;
    const controller = new AbortController();
    const request = early ?? loadSite(controller.signal);
    early = null;
    request
      .then((site) => setState({ status: 'ready', site }))
      .catch((err: Error) => {
        if (err.name !== 'AbortError') setState({ status: 'error' });
      });
    return () => controller.abort();
  }, [initial]);
  return <SiteContext.Provider value={state}>{children}</SiteContext.Provider>;
}

export const useSite = () => useContext(SiteContext);
