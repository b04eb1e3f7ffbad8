// Module boundaries of src/, checked by `npm run depcheck` (part of `npm test`, so CI fails on a
// crossing). The rules are explained in docs/design.md §12 (module boundaries) and drawn in docs/architecture.md.
//
// A module is a folder of src/ (money-out, collections, banking, wallets, …) other than the
// libraries below; it may hold parts in folders of its own (money-out/pipeline, money-out/refunds),
// which reach each other freely. From another module, a part may import only the public entries:
// service.ts (what it does), types.ts (the types others need to take part) and, where one exists,
// public.ts. Its repo.ts, routes.ts, jobs and helpers are the module's own business.
// Libraries (platform, banking/nip, client) import no module. The composition root (src/*.ts: app,
// main, server) wires everything and is imported by no module below it.
// Tables are not imports: test/platform/table-ownership.test.ts checks that only a table's owning
// module names it in SQL.
const LIBRARIES = '^src/(platform|banking/nip|client|types)/'
const PUBLIC_ENTRIES = [
  '^src/[^/]+/(service|types|public)\\.ts$',
  '^src/[^/]+/[^/]+/(service|types|public)\\.ts$',
  // Request authentication: every route declares its scheme and reads its caller through it.
  '^src/partners/auth\\.ts$',
]

export default {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No module reaches itself again through its imports (type-only imports count too).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-feature-cycles',
      comment: 'No part of a module depends on a part that depends on it, through any of their files.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-through-public-entry',
      comment:
        "A module reaches another only through its parts' service.ts, types.ts or public.ts, never their repo, routes or internals.",
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: LIBRARIES },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', LIBRARIES, ...PUBLIC_ENTRIES] },
    },
    {
      name: 'libraries-import-no-module',
      comment:
        'platform/, banking/nip/ and client/ know no module (the ledger core and the rest depend on them, not the reverse).',
      severity: 'error',
      from: { path: '^src/(platform|banking/nip|client)/' },
      to: { path: '^src/', pathNot: LIBRARIES },
    },
    {
      name: 'nothing-imports-the-composition-root',
      comment: 'src/app.ts, main.ts and server.ts wire the modules together; no module or library imports them.',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves to a file or an installed package.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages as Node does for an ES module (some publish only an `import` export).
    enhancedResolveOptions: { conditionNames: ['import', 'node', 'default'], exportsFields: ['exports'] },
  },
}
