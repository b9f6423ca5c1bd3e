import type { ReactNode } from 'react';

export interface BannerProps {
  children: ReactNode;
  variant?: 'error' | 'info' | 'success';
  /** When given, the banner shows a close button that calls it. */
  onDismiss?: () => void;
  action?: ReactNode;
}

export function Banner({ children, variant = 'error', onDismiss, action }: BannerProps) {
  return (
    <div className={`banner banner-${variant}`} role={variant === 'error' ? 'alert' : 'status'}>
      <p className="banner-message">{children}</p>
      {action}
      {onDismiss && (
        <button type="button" className="banner-close" aria-label="Dismiss" onClick={onDismiss}>
          ×
        </button>
      )}
    </div>
  );
}
