// What other modules may use of metrics: the registry's type, which the app hands them.
export type { Metrics } from './metrics.ts';
