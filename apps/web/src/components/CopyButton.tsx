// A small Copy button: copies its text, says "Copied" on the button and to screen readers, and
// never throws where the clipboard is missing or refused (plain-http pages, denied permission).
import { useEffect, useRef, useState } from 'react';

export const COPIED = 'Copied';
export const COPY_FAILED = 'Could not copy. Select the text and copy it yourself.';
/** How long the button says Copied. */
export const COPIED_MS = 2_000;

/** The older way, for pages without navigator.clipboard (plain http other than localhost). */
function copyBySelection(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  const active = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  let done = false;
  try {
    done = typeof document.execCommand === 'function' && document.execCommand('copy');
  } catch {
    done = false;
  }
  area.remove();
  active?.focus?.({ preventScroll: true });
  return done;
}

/** Copies `text`; resolves false (never rejects) when the browser would not. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, not focused): the older way may still work.
  }
  return copyBySelection(text);
}

function CopyIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <rect x="5.5" y="5.5" width="8" height="8.5" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <path
        d="M10.5 3.5v-.5A1.5 1.5 0 0 0 9 1.5H3.5A1.5 1.5 0 0 0 2 3v6a1.5 1.5 0 0 0 1.5 1.5H4"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.5"
      />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="m3 8.5 3 3 7-7" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  );
}

export function CopyButton({
  text,
  label = 'Copy',
  className = 'copy-button',
}: {
  /** What to copy (read when clicked). */
  text: string | (() => string);
  /** The button's name, e.g. "Copy code". */
  label?: string;
  className?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number | null>(null);
  useEffect(
    () => () => {
      if (timer.current !== null) window.clearTimeout(timer.current);
    },
    [],
  );
  const onClick = async () => {
    const ok = await copyText(typeof text === 'function' ? text() : text);
    setState(ok ? 'copied' : 'failed');
    if (timer.current !== null) window.clearTimeout(timer.current);
    if (ok) timer.current = window.setTimeout(() => setState('idle'), COPIED_MS);
  };
  return (
    <span className="copy-button-wrap">
      <button
        type="button"
        className={`${className}${state === 'copied' ? ' is-copied' : ''}`}
        onClick={() => void onClick()}
      >
        {state === 'copied' ? <CheckIcon /> : <CopyIcon />}
        <span className="copy-button-label">{state === 'copied' ? COPIED : label}</span>
      </button>
      {/* Announced once per copy; the button's own name changes too. */}
      <span className="visually-hidden" role="status">
        {state === 'copied' ? COPIED : state === 'failed' ? COPY_FAILED : ''}
      </span>
      {state === 'failed' && (
        <span className="copy-button-failed" aria-hidden="true">
          {COPY_FAILED}
        </span>
      )}
    </span>
  );
}
