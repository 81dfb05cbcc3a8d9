// The pages' bundles go into the Python package, which serves or inlines them: no Node.js
// at install or run time. One IIFE per page (library mode builds one entry at a time: the
// `dashboard` mode builds the hub's page beside the report), since the simulation report
// inlines its bundle in a file:// page, where modules cannot load.
import { defineConfig } from "vite";

const PAGES = {
  report: { entry: "src/report.ts", name: "FleetwardenReport" },
  dashboard: { entry: "src/dashboard.ts", name: "FleetwardenDashboard" },
};

export default defineConfig(({ mode }) => {
  const page = mode === "dashboard" ? "dashboard" : "report";
  return {
    // Library mode leaves `process.env.NODE_ENV` to the user's bundler: the page has none.
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    build: {
      outDir: "../src/fleetwarden/dashboard/assets",
      emptyOutDir: page === "report", // the first build of the two
      target: "es2022",
      lib: {
        ...PAGES[page],
        formats: ["iife"],
        fileName: () => `${page}.js`,
        cssFileName: page,
      },
    },
  };
});
