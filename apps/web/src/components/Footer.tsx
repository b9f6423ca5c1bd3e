import { Link } from 'react-router-dom';
import { useSite } from '../lib/site.tsx';

export function Footer() {
  const site = useSite();
  const creator = site.status === 'ready' ? site.site.creator : null;
  return (
    <footer className="footer">
      <div className="container footer-inner">
        <p>
          © {new Date().getFullYear()} Daybook
          {creator && (
            <>
              {' '}
              · Made by <Link to={`/${creator.slug}`}>{creator.name}</Link>
            </>
          )}
        </p>
        {creator && creator.links.length > 0 && (
          <ul className="footer-links" aria-label={`${creator.name} elsewhere`}>
            {creator.links.map((link) => (
              <li key={link.url}>
                <a href={link.url} target="_blank" rel="noopener noreferrer">
                  {link.label}
                </a>
              </li>
            ))}
          </ul>
        )}
      </div>
    </footer>
  );
}
