import { defineConfig } from 'vitest/config';

// Unit tests of the pure modules only (protocol, format, timeline, rewound): no browser, no
// JupyterLab. `tsc` (tsconfig.json) keeps excluding src/*.test.ts from the build.
export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts']
  }
});
