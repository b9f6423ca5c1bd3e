// Calendar connections are a page the server renders (/accounts/3rdparty/): the app leaves for it
// with a full page load. Only when the server itself answered this address with the app, so it has
// no such page, does the app say so instead of loading it again and again.
import { useEffect } from 'react';
import { Loading } from '../../components/Loading.tsx';
import { UnavailablePage } from '../../components/UnavailablePage.tsx';

export const CONNECTIONS_PAGE = '/accounts/3rdparty/';
/** Said when this address reached the app instead of the Daybook server's page. */
export const NO_SERVER_PAGE =
  'This address opened the app instead of the Daybook server, which shows your calendar connections. Reload the page; if this keeps happening, ask whoever runs this Daybook to send /accounts/ addresses to its server.';

/** The address the browser loaded the app at, before any in-app navigation. */
const loadedAt = typeof window === 'undefined' ? '' : window.location.pathname;
const isConnectionsPath = (path: string) => path.replace(/\/+$/, '') === '/accounts/3rdparty';

export function CalendarConnectionsRedirect({ loadedPath = loadedAt }: { loadedPath?: string }) {
  const serverHasNoPage = isConnectionsPath(loadedPath);
  useEffect(() => {
    if (!serverHasNoPage) window.location.assign(CONNECTIONS_PAGE);
  }, [serverHasNoPage]);
  if (serverHasNoPage) {
    return (
      <UnavailablePage title="Calendar Connections" subtitle="The calendar connections page is not available.">
        <p>{NO_SERVER_PAGE}</p>
      </UnavailablePage>
    );
  }
  return <Loading label="Opening calendar connections..." />;
}
