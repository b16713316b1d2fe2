import { defineConfig } from 'vitest/config';

// Two projects. `unit`: pure tests (no Temporal server, no child process, no port, no browser, no
// database server), run file-parallel. `integration`: tests that start any of those, one file
// at a time after the unit files, as two cores need. `npm test` runs both; `npm run test:unit`
// and `npm run test:integration` one each (`vitest run --project NAME`).
//
// A project inherits none of the root's test options (no `extends`), so the global setup below
// runs once (for the root) and not once more per project; what it provides reaches both projects.
const timeouts = {
  // Temporal suites start a dev server and workers; give them room on a two-core machine.
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Compiles the CLI first, so tests that spawn it run fresh JavaScript; pulls the public data.
    globalSetup: ['test/global-setup.ts'],
    // In CI a JSON report is written too, so .ci/run can print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.driftline/test-results.json' },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          ...timeouts,
          fileParallelism: true,
          // Vitest's default is one worker fewer than the cores: a single worker on two cores.
          maxWorkers: '100%',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          // A test file not (yet) sorted into a folder runs here: one at a time is always safe.
          include: ['test/integration/**/*.test.ts', 'test/*.test.ts'],
          ...timeouts,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
