export * from './common.ts';
export * from './health.ts';
export * from './site.ts';
export * from './accounts.ts';
