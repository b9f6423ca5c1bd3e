import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
  /** Renders instead of the default fallback; `reset` re-renders the children. */
  fallback?: (reset: () => void) => ReactNode;
}

export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  override state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('Unhandled error in view', error, info.componentStack);
  }

  reset = () => this.setState({ error: null });

  override render() {
    if (!this.state.error) return this.props.children;
    if (this.props.fallback) return this.props.fallback(this.reset);
    return <GlobalErrorFallback onRetry={this.reset} />;
  }
}

export function GlobalErrorFallback({ onRetry }: { onRetry: () => void }) {
  return (
    <div className="container page">
      <div className="card error-fallback" role="alert">
        <h1>Sorry, something went wrong</h1>
        <p>Please refresh the page. If the problem keeps happening, contact support.</p>
        <button type="button" className="btn btn-primary" onClick={onRetry}>
          Try again
        </button>
      </div>
    </div>
  );
}
