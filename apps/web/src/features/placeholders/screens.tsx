// Screens owned by later features. Each keeps its final route and title.
import { useEffect } from 'react';
import { Link, useLocation, useParams } from 'react-router-dom';
import { Loading } from '../../components/Loading.tsx';
import { Placeholder } from './Placeholder.tsx';

export function DailyMessageScreen() {
  const { id } = useParams();
  return (
    <Placeholder title="Daily Message" subtitle={`Message ${id}`}>
      <p>
        <Link to="/resources">Back to resources</Link>
      </p>
    </Placeholder>
  );
}
/** Calendar connections are a server-rendered page: leave the single-page app for it. */
export function CalendarConnectionsRedirect() {
  const { pathname } = useLocation();
  const atServerPage = pathname.endsWith('/');
  useEffect(() => {
    if (!atServerPage) window.location.assign('/accounts/3rdparty/');
  }, [atServerPage]);
  if (atServerPage) {
    return <Placeholder title="Calendar Connections" subtitle="The calendar connections page is not available." />;
  }
  return <Loading label="Opening calendar connections..." />;
}
