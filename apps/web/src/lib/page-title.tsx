// Each page's own document title ("Memories · Daybook"), and a polite announcement of it after a
// navigation inside the app: a screen reader hears where it landed, as it would on a full page load.
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router-dom';

export const SITE_NAME = 'Daybook';

export const pageTitle = (title: string) => `${title} · ${SITE_NAME}`;

type Listener = (title: string) => void;
let listener: Listener | null = null;

/** Sets the document title while the page is shown. */
export function usePageTitle(title: string) {
  useEffect(() => {
    const text = pageTitle(title);
    document.title = text;
    listener?.(text);
  }, [title]);
}

/** For route elements that do not set their own title (see routes.tsx). */
export function Titled({ title, children }: { title: string; children: ReactNode }) {
  usePageTitle(title);
  return children;
}

/**
 * A polite live region saying the new page's title. Not on the first page: the browser reads the
 * title of a page it loads.
 */
export function PageAnnouncer() {
  const { key } = useLocation();
  const firstKey = useRef(key);
  const navigated = useRef(false);
  if (key !== firstKey.current) navigated.current = true;
  const [text, setText] = useState('');
  useEffect(() => {
    listener = (title) => {
      if (navigated.current) setText(title);
    };
    return () => {
      listener = null;
    };
  }, []);
  return (
    <p className="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="page-announcer">
      {text}
    </p>
  );
}
