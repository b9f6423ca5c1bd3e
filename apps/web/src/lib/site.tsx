import { type TSiteInfo, ZSiteInfo } from '@daybook/contracts';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { apiRequest } from './api.ts';

export type SiteState = { status: 'loading' } | { status: 'ready'; site: TSiteInfo } | { status: 'error' };

const SiteContext = createContext<SiteState>({ status: 'loading' });

export function SiteProvider({ children, initial }: { children: ReactNode; initial?: SiteState }) {
  const [state, setState] = useState<SiteState>(initial ?? { status: 'loading' });
  useEffect(() => {
    if (initial) return;
    const controller = new AbortController();
    apiRequest('/api/site/', ZSiteInfo, { signal: controller.signal })
      .then((site) => setState({ status: 'ready', site }))
      .catch((err: Error) => {
        if (err.name !== 'AbortError') setState({ status: 'error' });
      });
    return () => controller.abort();
  }, [initial]);
  return <SiteContext.Provider value={state}>{children}</SiteContext.Provider>;
}

export const useSite = () => useContext(SiteContext);
