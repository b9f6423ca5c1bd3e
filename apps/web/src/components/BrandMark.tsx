export function BrandMark() {
  return (
    <svg className="brand-mark" viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <rect width="64" height="64" rx="14" fill="#4338ca" />
      <circle cx="32" cy="36" r="11" fill="#fbbf24" />
      <rect x="12" y="40" width="40" height="14" fill="#4338ca" />
      <rect x="14" y="42" width="36" height="3" rx="1.5" fill="#fff" />
    </svg>
  );
}
