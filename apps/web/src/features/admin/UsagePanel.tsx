// Usage: what the model spent, as its endpoint reported it, over the last 7 or 30 days: in all, by
// purpose, by day, and the users who spent most. Loaded when the tab is first shown.
import type { TModelUsage, ZModelPurpose } from '@daybook/contracts';
import { useEffect, useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { GENERIC_ERROR, serverMessage } from '../../lib/api.ts';
import { isForbidden, modelUsage } from './api.ts';

const PURPOSES: Record<(typeof ZModelPurpose.options)[number], string> = {
  chat: 'Chat and onboarding',
  learning: 'Learning memories',
  research: 'Web research',
  daily: 'Daily messages',
};
const PERIODS = [7, 30] as const;

const count = (n: number) => n.toLocaleString();
const total = (t: { prompt_tokens: number; completion_tokens: number }) => t.prompt_tokens + t.completion_tokens;
const cachedShare = (t: { prompt_tokens: number; cached_tokens: number }) =>
  t.prompt_tokens ? `${Math.round((100 * t.cached_tokens) / t.prompt_tokens)}%` : '–';

export function UsagePanel({ onForbidden, shown }: { onForbidden: () => void; shown: boolean }) {
  const [days, setDays] = useState<(typeof PERIODS)[number]>(30);
  const [usage, setUsage] = useState<TModelUsage | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!shown) return;
    const controller = new AbortController();
    setError(null);
    modelUsage(days, controller.signal).then(setUsage, (err: unknown) => {
      if (controller.signal.aborted) return;
      if (isForbidden(err)) onForbidden();
      else setError(serverMessage(err) ?? GENERIC_ERROR);
    });
    return () => controller.abort();
  }, [days, shown, onForbidden]);

  return (
    <div className="admin-usage">
      <div className="admin-toolbar">
        <label className="admin-usage-period">
          <span>Period</span>
          <select className="input" value={days} onChange={(e) => setDays(Number(e.target.value) as 7 | 30)}>
            {PERIODS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </label>
        <p className="admin-count muted">
          {usage?.daily_limit
            ? `Each user may spend ${count(usage.daily_limit)} tokens a day.`
            : 'No daily allowance per user is set (LLM_USER_DAILY_TOKENS).'}
        </p>
      </div>
      {error && (
        <div className="admin-banners">
          <Banner>{error}</Banner>
        </div>
      )}
      {usage && <UsageReport usage={usage} />}
    </div>
  );
}

function UsageReport({ usage }: { usage: TModelUsage }) {
  if (!usage.totals.calls)
    return <p className="admin-empty muted">No model calls reported their tokens in these {usage.days} days.</p>;
  return (
    <>
      <dl className="usage-totals">
        <div className="card usage-total">
          <dt>Prompt tokens</dt>
          <dd>{count(usage.totals.prompt_tokens)}</dd>
          <dd className="muted">{cachedShare(usage.totals)} cached</dd>
        </div>
        <div className="card usage-total">
          <dt>Completion tokens</dt>
          <dd>{count(usage.totals.completion_tokens)}</dd>
        </div>
        <div className="card usage-total">
          <dt>Model calls</dt>
          <dd>{count(usage.totals.calls)}</dd>
        </div>
      </dl>
      <UsageTable
        title="By purpose"
        rows={usage.by_purpose.map((p) => ({ key: p.purpose, name: PURPOSES[p.purpose], ...p }))}
      />
      <UsageTable
        title="Users who spent most"
        rows={usage.top_users.map((u) => ({ key: String(u.id), name: u.email, ...u }))}
      />
      <UsageDays days={usage.by_day} />
    </>
  );
}

type Row = { key: string; name: string } & TModelUsage['totals'];

function UsageTable({ title, rows }: { title: string; rows: Row[] }) {
  return (
    <section className="admin-usage-section" aria-label={title}>
      <h2 className="admin-section-title">{title}</h2>
      <div className="admin-table-wrap">
        <table className="admin-table usage-table">
          <thead>
            <tr>
              <th scope="col">{title === 'By purpose' ? 'Purpose' : 'Account'}</th>
              <th scope="col">Calls</th>
              <th scope="col">Prompt tokens</th>
              <th scope="col">Cached</th>
              <th scope="col">Completion tokens</th>
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}>
                <th scope="row" className="admin-cell-main">
                  <span className="admin-main-text">{r.name}</span>
                </th>
                <td data-label="Calls">{count(r.calls)}</td>
                <td data-label="Prompt tokens">{count(r.prompt_tokens)}</td>
                <td data-label="Cached">{cachedShare(r)}</td>
                <td data-label="Completion tokens">{count(r.completion_tokens)}</td>
                <td data-label="Total">{count(total(r))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Tokens a day, as bars (the numbers are in each bar's text). */
function UsageDays({ days }: { days: TModelUsage['by_day'] }) {
  const most = Math.max(1, ...days.map(total));
  return (
    <section className="admin-usage-section" aria-label="By day">
      <h2 className="admin-section-title">By day</h2>
      <ul className="usage-days">
        {days.map((d) => (
          <li key={d.day} className="usage-day">
            <span className="usage-day-date">{d.day}</span>
            <span className="usage-day-bar" aria-hidden="true">
              <span style={{ width: `${(100 * total(d)) / most}%` }} />
            </span>
            <span className="usage-day-value">{count(total(d))} tokens</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
