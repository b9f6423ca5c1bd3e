export * from './accounts.ts';
export * from './chat.ts';
export * from './common.ts';
export * from './health.ts';
export * from './memories.ts';
export * from './research.ts';
export * from './resources.ts';
export * from './site.ts';
