// Runs the tour engine with real timers and hands its state to React.
import { useCallback, useEffect, useRef, useState } from 'react';
import { createTourEngine, initialTourState, type TourClock, type TourEngine, type TourState } from './tour.engine.ts';
import { TOUR_SCRIPT, type TourStage } from './tour.script.ts';

declare global {
  interface Window {
    /** Test-only: end-to-end tests set this (page.addInitScript) to speed the tour up; every delay is multiplied by it. */
    __DAYBOOK_TOUR_TIME_SCALE__?: number;
  }
}

export const browserClock: TourClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: (handle) => window.clearTimeout(handle as number),
};

export function readTimeScale(): number {
  const scale = typeof window === 'undefined' ? undefined : window.__DAYBOOK_TOUR_TIME_SCALE__;
  return typeof scale === 'number' && Number.isFinite(scale) && scale >= 0 ? scale : 1;
}

export function prefersReducedMotion(): boolean {
  return typeof window !== 'undefined' && window.matchMedia?.('(prefers-reduced-motion: reduce)').matches === true;
}

export interface UseTourOptions {
  script?: readonly TourStage[];
  clock?: TourClock;
  random?: () => number;
  reducedMotion?: boolean;
  timeScale?: number;
}

export function useTour({
  script = TOUR_SCRIPT,
  clock = browserClock,
  random = Math.random,
  reducedMotion = false,
  timeScale = 1,
}: UseTourOptions = {}) {
  const [state, setState] = useState<TourState>(() => initialTourState(script));
  const engineRef = useRef<TourEngine | null>(null);

  useEffect(() => {
    const engine = createTourEngine({ script, clock, random, reducedMotion, timeScale });
    engineRef.current = engine;
    const unsubscribe = engine.subscribe(setState);
    engine.start();
    return () => {
      unsubscribe();
      engine.dispose();
      engineRef.current = null;
    };
  }, [script, clock, random, reducedMotion, timeScale]);

  const advance = useCallback(() => engineRef.current?.advance() ?? false, []);
  return { state, advance };
}
