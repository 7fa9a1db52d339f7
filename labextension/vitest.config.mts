import { defineConfig } from 'vitest/config';

// Unit tests of the pure modules only (protocol, format, timeline, rewound): no browser, no
// JupyterLab. `tsc` (tsconfig.json) keeps excluding src/*.test.ts from the build.
export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // The tests wait for results, not clocks: on a loaded machine (the suite must pass at load
    // 20+) the 10,000-frame scroll test alone can take longer than vitest's 5 s default.
    testTimeout: 120_000
  }
});
