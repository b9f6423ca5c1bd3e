import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';
import { clearAuthCaches } from '../features/auth/allauth.ts';
import { clearCookies } from './fetch.ts';

// findBy/waitFor give up after this long. The default second is shorter than a debounced search
// takes to type and answer while the whole suite shares two busy cores.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  clearAuthCaches();
  clearCookies();
  window.sessionStorage.clear();
});
