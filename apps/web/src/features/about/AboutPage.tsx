import type { TSiteInfo } from '@daybook/contracts';
import { Link } from 'react-router-dom';
import { usePageTitle } from '../../lib/page-title.tsx';

const TECH = [
  ['TypeScript', 'end to end, strict'],
  ['React', 'with React Router and Vite'],
  ['Fastify', 'HTTP and WebSocket server'],
  ['PostgreSQL', 'through Prisma, or embedded PGlite'],
  ['OpenAI-compatible models', 'OpenAI, Ollama, vLLM, LM Studio'],
  ['zod', 'one set of contracts for server and browser'],
];

export function AboutPage({ creator }: { creator: TSiteInfo['creator'] }) {
  usePageTitle(creator.name);
  const inviteHref = creator.email
    ? `mailto:${creator.email}?subject=${encodeURIComponent('Daybook invite request')}`
    : null;
  return (
    <div className="container page about">
      <header className="about-header">
        <span className="about-avatar" aria-hidden="true">
          {creator.name.trim()[0]?.toUpperCase()}
        </span>
        <div>
          <h1 className="page-title">{creator.name}</h1>
          <p className="page-subtitle">Creator of Daybook</p>
        </div>
      </header>
      <div className="about-grid">
        <section className="card" aria-labelledby="about-bio">
          <h2 id="about-bio">About</h2>
          <p className="about-bio">{creator.bio}</p>
          {creator.links.length > 0 && (
            <ul className="profile-links" aria-label="Profiles">
              {creator.links.map((link) => (
                <li key={link.url}>
                  <a className="btn btn-secondary btn-sm" href={link.url} target="_blank" rel="noopener noreferrer">
                    {link.label}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="card" aria-labelledby="about-product">
          <h2 id="about-product">The product</h2>
          <p>
            Daybook is a personal AI assistant you host yourself. You chat with it, it learns your interests and
            routines as memories you control, and every morning it writes you a daily message with the weather, your
            calendar and short research summaries on what you care about.
          </p>
          <p className="muted">
            Access is by invitation. To get an invite, contact {creator.name}
            {creator.email ? ' by email' : creator.links.length ? ' through one of the profiles listed here' : ''}.
          </p>
          <div className="button-row">
            {inviteHref ? (
              <a className="btn btn-primary" href={inviteHref}>
                Request an invite
              </a>
            ) : null}
            {creator.email && (
              <a className="btn btn-secondary" href={`mailto:${creator.email}`}>
                Email {creator.name.split(' ')[0]}
              </a>
            )}
            <Link className="btn btn-secondary" to="/guest-tour">
              Take the Tour
            </Link>
          </div>
        </section>
        <section className="card about-tech" aria-labelledby="about-tech">
          <h2 id="about-tech">Built with</h2>
          <ul className="tech-list">
            {TECH.map(([name, note]) => (
              <li key={name}>
                <strong>{name}</strong>
                <span>{note}</span>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}
