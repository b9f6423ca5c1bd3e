import { Navigate, useLocation } from 'react-router-dom';

/** /login is where older links (and the reset flow) point: the sign-in screen, same query. */
export function LoginAlias() {
  const { search, hash } = useLocation();
  return <Navigate to={`/auth/login${search}${hash}`} replace />;
}
