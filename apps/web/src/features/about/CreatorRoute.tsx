import { useParams } from 'react-router-dom';
import { Loading } from '../../components/Loading.tsx';
import { useSite } from '../../lib/site.tsx';
import { NotFoundPage } from '../not-found/NotFoundPage.tsx';
import { AboutPage } from './AboutPage.tsx';

/** `/{name}`: the creator's about page when the slug matches the configured one, else Not Found. */
export function CreatorRoute() {
  const { slug } = useParams();
  const site = useSite();
  if (site.status === 'loading') return <Loading />;
  if (site.status === 'ready' && site.site.creator.slug === slug) return <AboutPage creator={site.site.creator} />;
  return <NotFoundPage />;
}
