// The import rules `npm run lint` enforces (dependency-cruiser): no cycles between files or between
// folders, server modules reach each other only through their public face, and the shared layers
// (server lib/, web lib/ and components/) import no feature. docs/architecture.md explains the map.
const SERVER = '^apps/server/src/';
const WEB = '^apps/web/src/';
// Test support lives beside the code it drives but is not part of the module graph.
const TEST_SUPPORT = '\\.test\\.tsx?$|\\.suite\\.ts$|\\.test-[a-z-]+\\.ts$|/test/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A file must not import itself back through others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment:
        'Features, plugins and shared layers form a one-way graph: two folders must not import each other, directly or around a loop.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'module-public-face',
      comment:
        'A server module uses another only through its service, its index.ts or its types and errors; its repo, routes and helpers are its own.',
      severity: 'error',
      from: { path: `${SERVER}modules/([^/]+)/` },
      to: {
        path: `${SERVER}modules/`,
        pathNot: [`${SERVER}modules/$1/`, '/index\\.ts$', '\\.service\\.ts$', '\\.types\\.ts$', '\\.errors\\.ts$'],
      },
    },
    {
      name: 'server-lib-is-shared',
      comment: 'lib/ is shared by every module, so it imports none of them (nor the app, plugins or db).',
      severity: 'error',
      from: { path: `${SERVER}lib/` },
      to: { path: `${SERVER}(modules|plugins|db)/|${SERVER}[^/]+\\.ts$` },
    },
    {
      name: 'web-shared-is-shared',
      comment: 'The web app’s lib/ and components/ are used by every feature, so they import none.',
      severity: 'error',
      from: { path: `${WEB}(lib|components)/` },
      to: { path: `${WEB}(features|app)/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: [TEST_SUPPORT, 'generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.tsx', '.js'],
    },
  },
};
