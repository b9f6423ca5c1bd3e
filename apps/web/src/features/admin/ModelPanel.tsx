// Model: the administrator checks what the configured model server supports; Daybook works around
// what it lacks, and the check says how and what could be changed on the server.
import type { TModelCheck, TModelCheckItem } from '@daybook/contracts';
import { useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { GENERIC_ERROR, serverMessage } from '../../lib/api.ts';
import { checkModel, isForbidden } from './api.ts';

const STATUS: Record<TModelCheckItem['status'], { label: string; badge: string }> = {
  ok: { label: 'Works', badge: 'badge-success' },
  degraded: { label: 'Worked around', badge: 'badge-warning' },
  failed: { label: 'Fails', badge: 'badge-danger' },
  skipped: { label: 'Not set up', badge: 'badge-muted' },
};

export function ModelPanel({ onForbidden }: { onForbidden: () => void }) {
  const [check, setCheck] = useState<TModelCheck | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setCheck(await checkModel());
    } catch (err) {
      if (isForbidden(err)) onForbidden();
      else setError(serverMessage(err) ?? GENERIC_ERROR);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="admin-model">
      <section className="card admin-model-intro">
        <h2 className="admin-section-title">The assistant model</h2>
        <p className="muted">
          Model servers differ in what they support: tools, forced tool calls, JSON output, reasoning. The check asks
          the configured server for each (a few short model calls), tells what Daybook will use, and what you could
          change on the server.
        </p>
        <div className="button-row">
          <button type="button" className="btn btn-primary" onClick={() => void run()} disabled={busy}>
            {busy ? 'Checking…' : check ? 'Check again' : 'Check the model'}
          </button>
        </div>
        <p className="visually-hidden" role="status">
          {busy ? 'Checking the model…' : check ? 'The check is done.' : ''}
        </p>
      </section>
      {error && (
        <div className="admin-banners">
          <Banner>{error}</Banner>
        </div>
      )}
      {check && <ModelReport check={check} />}
    </div>
  );
}

function ModelReport({ check }: { check: TModelCheck }) {
  return (
    <section className="admin-model-report" aria-labelledby="model-report-title">
      <div className="admin-section-head admin-model-head">
        <h2 className="admin-section-title" id="model-report-title">
          {check.model ?? 'No model configured'}
        </h2>
        {check.endpoint && <p className="admin-model-endpoint">{check.endpoint}</p>}
      </div>
      <div className="admin-banners">
        <Banner variant={check.ok ? 'success' : 'error'}>
          {check.ok
            ? 'The chat and its structured answers work with this model.'
            : 'Daybook cannot use this model as configured. See what failed below.'}
        </Banner>
      </div>
      <ul className="model-checks">
        {check.checks.map((item) => (
          <li key={item.name} className="model-check">
            <div className="model-check-head">
              <h3 className="model-check-name">{item.name}</h3>
              <span className={`badge ${STATUS[item.status].badge}`}>{STATUS[item.status].label}</span>
            </div>
            <p className="model-check-detail">{item.detail}</p>
            {item.advice && <p className="model-check-advice">{item.advice}</p>}
          </li>
        ))}
      </ul>
      {check.uses.length > 0 && (
        <div className="card model-uses">
          <h3 className="model-check-name">Daybook will use</h3>
          <ul>
            {check.uses.map((use) => (
              <li key={use}>{use}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
