import { defineConfig } from 'prisma/config';

// Used by `prisma generate` only; migrations run through scripts/db.ts (no native engine needed).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
