import { Link } from 'react-router-dom';
import { useAuth } from '../auth/auth-context.tsx';

const FEATURES = [
  {
    title: 'Personalized learning',
    body: 'Daybook remembers your interests, routines and the facts you share, and you can see, edit or delete every one of them.',
    icon: '✦',
  },
  {
    title: 'Daily insights',
    body: 'Each morning you get a short briefing: the weather where you are, your calendar, and news on the topics you follow.',
    icon: '☀',
  },
  {
    title: 'Smart conversations',
    body: 'Chat in real time with an assistant that knows your context, and ask it to research anything, with sources.',
    icon: '➜',
  },
];

export function HomePage() {
  const { state } = useAuth();
  return (
    <>
      <section className="hero">
        <div className="container hero-inner">
          <div className="hero-copy">
            <p className="eyebrow">Your personal AI assistant</p>
            <h1 className="hero-title">Welcome to Daybook</h1>
            <p className="hero-subtitle">
              An assistant that learns what matters to you, and starts every morning with a briefing written for you
              alone.
            </p>
            <div className="hero-actions">
              {state.status === 'loading' && <span className="hero-loading">Loading</span>}
              {state.status === 'authenticated' && (
                <Link to="/chat" className="btn btn-primary btn-lg">
                  Begin Chat
                </Link>
              )}
              {state.status === 'anonymous' && (
                <>
                  <Link to="/auth/signup" className="btn btn-primary btn-lg">
                    Get Started
                  </Link>
                  <Link to="/auth/login" className="btn btn-secondary btn-lg">
                    Sign In
                  </Link>
                </>
              )}
            </div>
          </div>
          <figure className="hero-preview" aria-label="Example of a daily message">
            <div className="preview-card">
              <p className="preview-kicker">Daily message · 7:00</p>
              <p className="preview-greeting">Good morning, Sam.</p>
              <ul className="preview-list">
                <li>
                  <span className="preview-tag preview-tag-weather">Weather</span>
                  Lisbon, sunny, 21°. Good day for the climbing wall.
                </li>
                <li>
                  <span className="preview-tag preview-tag-calendar">Calendar</span>
                  10:30 design review · 18:00 climbing with Ana
                </li>
                <li>
                  <span className="preview-tag preview-tag-research">Research</span>
                  Three new papers on sleep and training recovery, summarised.
                </li>
              </ul>
            </div>
          </figure>
        </div>
      </section>
      <section className="container features" aria-labelledby="features-title">
        <h2 id="features-title" className="visually-hidden">
          What Daybook does
        </h2>
        <div className="feature-grid">
          {FEATURES.map((f) => (
            <article key={f.title} className="card feature-card">
              <span className="feature-icon" aria-hidden="true">
                {f.icon}
              </span>
              <h3>{f.title}</h3>
              <p>{f.body}</p>
            </article>
          ))}
        </div>
      </section>
    </>
  );
}
