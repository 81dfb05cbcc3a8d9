// The pages' bundles go into the Python package, which serves or inlines them: no Node.js
// at install or run time. One IIFE per page, since the simulation report inlines its
// bundle in a file:// page, where modules cannot load.
import { defineConfig } from "vite";

export default defineConfig({
  // Library mode leaves `process.env.NODE_ENV` to the user's bundler: the page has none.
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "../src/fleetwarden/dashboard/assets",
    emptyOutDir: true,
    target: "es2022",
    lib: {
      entry: "src/report.ts",
      name: "FleetwardenReport",
      formats: ["iife"],
      fileName: () => "report.js",
      cssFileName: "report",
    },
  },
});
