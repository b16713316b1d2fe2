// The layer rules of DESIGN.md ("Layers"), checked by `npm run lint:deps` in CI. Each rule's
// name is what a violation reports; its comment says what to do instead. Type-only imports count
// (tsPreCompilationDeps), so a workflow importing an engine's type is caught too.
//
// New folders fit without editing this file: a workflow under workflows/ (sweep, agent) may
// import common/ only; an engine under engines/<name>/ (results, sweep, report, agent) follows
// the engine rules; api/ and bin/ may import activities/ and engines/. client/ is what the entry
// points (api/, bin/, mcp/) share: the Temporal client code that starts, reads and follows runs
// and sweeps; no entry point imports another's code.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'workflows-import-only-common',
      severity: 'error',
      comment:
        'Workflow code is bundled and replayed: it may import common/, other workflows and @temporalio/workflow ' +
        '(or @temporalio/common) only. Put shared types and pure helpers in common/.',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^(common|workflows)/', '(^|/)node_modules/@temporalio/(workflow|common)/', '^activities/'],
      },
    },
    {
      name: 'workflows-activity-signatures-type-only',
      severity: 'error',
      comment: 'A workflow may see activity signatures as types (import type), never activity code.',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'engines-not-upward',
      severity: 'error',
      comment:
        'Engines are plain TypeScript over their clients: they never import activities/, api/, bin/, infra/ or workflows/. ' +
        'Hand them what they need (clients, settings) from the entry point or the activity factory.',
      from: { path: '^engines/' },
      to: { path: '^(activities|api|bin|infra|workflows|mcp)/' },
    },
    {
      name: 'engines-no-temporal',
      severity: 'error',
      comment:
        'Engines know nothing of Temporal: throw an EngineError (engines/errors.ts) with a type from common/failures.ts; ' +
        'activities/failures.ts turns it into an ApplicationFailure.',
      from: { path: '^engines/' },
      to: { path: '(^|/)node_modules/@temporalio/' },
    },
    {
      name: 'activities-not-upward',
      severity: 'error',
      comment: 'Activities are built by factories handed their clients: they never import api/, bin/, infra/ or workflow code.',
      from: { path: '^activities/' },
      to: { path: '^(api|bin|infra|workflows|mcp)/' },
    },
    {
      name: 'common-imports-only-common',
      severity: 'error',
      comment:
        'common/ is shared by workflows and everything else: it imports only common/ and pure packages, ' +
        'never project layers or Node built-ins.',
      from: { path: '^common/' },
      to: { path: '^(activities|engines|api|bin|infra|workflows|mcp|bench|test)/' },
    },
    {
      name: 'common-no-node-builtins',
      severity: 'error',
      comment: 'common/ is bundled into workflows: no Node built-ins (fs, path, crypto, …).',
      from: { path: '^common/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'bin-and-mcp-not-api',
      severity: 'error',
      comment:
        'The CLI (and the MCP server) do not depend on the HTTP server: what they share (starting, reading and following runs and sweeps) ' +
        'lives in client/; import it from there.',
      from: { path: '^(bin|mcp)/' },
      to: { path: '^api/' },
    },
    {
      name: 'client-not-entry-points',
      severity: 'error',
      comment:
        'client/ is shared by the entry points (api/, bin/, mcp/): it never imports them, nor infra/ (their wiring) or workflow code. ' +
        'Hand it a Temporal Client and settings.',
      from: { path: '^client/' },
      to: { path: '^(api|bin|mcp|infra|workflows)/' },
    },
    {
      name: 'lower-layers-not-client',
      severity: 'error',
      comment: 'client/ belongs to the entry points: common/, engines/, activities/ and workflows/ never import it.',
      from: { path: '^(common|engines|activities|workflows)/' },
      to: { path: '^client/' },
    },
    {
      name: 'mcp-is-a-client',
      severity: 'error',
      comment:
        'The MCP server (mcp/) calls the running service as the API and the CLI do: it imports client/ (starting and reading ' +
        'runs, sweeps), common/, engines/ (pure parts and types) and packages, never activities/, workflows/, infra/, bin/ or api/. ' +
        'The entry points (bin/mcp-command.ts, api/mcp-route.ts) build its parts and hand them over.',
      from: { path: '^mcp/' },
      to: { path: '^(activities|workflows|infra|bin|api)/' },
    },
    {
      name: 'only-entry-points-import-mcp',
      severity: 'error',
      comment: 'mcp/ is served by the entry points: bin/ (`driftline mcp`, stdio) and api/ (POST /mcp); tests drive it too.',
      from: { pathNot: '^(mcp|bin|api|test)/' },
      to: { path: '^mcp/' },
    },
    {
      name: 'nothing-imports-bin',
      severity: 'error',
      comment:
        'bin/ is the CLI entry point; nothing imports it. Move what others need into engines/, activities/ or infra/. ' +
        '(Tests may call a command function directly.)',
      from: { pathNot: '^(bin|test)/' },
      to: { path: '^bin/' },
    },
    {
      name: 'nothing-imports-tests',
      severity: 'error',
      comment: 'Product code never imports test/ (fakes and helpers belong to the tests; benchmarks may use the fakes).',
      from: { pathNot: '^(test|bench)/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules form no import cycle: split the contract (types, interface) from its implementations.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'An import that does not resolve: a typo, or a package missing from package.json. (dist/ is built output: bin/driftline.js may load it.)',
      from: {},
      to: { couldNotResolve: true, pathNot: '(^|/)dist/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^\\.tools/|^\\.driftline/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
