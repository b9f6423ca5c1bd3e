import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, vi } from 'vitest';
import { clearAuthCaches } from '../features/auth/allauth.ts';
import { clearCookies } from './fetch.ts';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  clearAuthCaches();
  clearCookies();
  window.sessionStorage.clear();
});
