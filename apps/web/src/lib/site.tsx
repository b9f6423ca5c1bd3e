import { type TSiteInfo, ZSiteInfo } from '@daybook/contracts';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { apiRequest } from './api.ts';

export type SiteState = { status: 'loading' } | { status: 'ready'; site: TSiteInfo } | { status: 'error' };

const SiteContext = createContext<SiteState>({ status: 'loading' });

const loadSite = (signal?: AbortSignal) => apiRequest('/api/site/', ZSiteInfo, { signal });
let early: Promise<TSiteInfo> | null = null;

/** Asks for the site's details before React starts (main.tsx); the provider takes this answer once. */
export function loadSiteEarly() {
  early ??= loadSite();
  // Handled where it is taken; this only keeps a failure before then from counting as unhandled.
  early.catch(() => {});
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
