import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.{ts,tsx}", "plugins/**/*.test.{ts,tsx}", "kernel/**/*.test.ts"],
    environment: "node",
    setupFiles: ["test/setup-env.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
