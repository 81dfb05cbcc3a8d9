"""fleetwarden's web pages: the simulation report (report.py) and the hub's dashboard, which
the API server serves at `/` (pages.py), on one rendering code. Their sources are in `web/`
(TypeScript, Apache ECharts); the built bundles ship in `assets/`, so no Node.js is needed to
run them.
"""
