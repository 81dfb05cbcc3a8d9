"""fleetwarden's web pages: the simulation report today, the hub's dashboard (which the
server will mount) on the same rendering code. Their sources are in `web/` (TypeScript,
Apache ECharts); the built bundles ship in `assets/`, so no Node.js is needed to run them.
"""
