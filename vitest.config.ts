import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles the CLI first, so tests that spawn it run fresh JavaScript.
    globalSetup: ['test/global-setup.ts'],
    // Temporal suites start a dev server and workers; give them room on a two-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // In CI a JSON report is written too, so .ci/run can print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.driftline/test-results.json' },
  },
});
