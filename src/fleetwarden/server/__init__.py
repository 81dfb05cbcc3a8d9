"""Layer 6: the hub's Kubernetes-compatible HTTP API server (an ASGI app, served by uvicorn)."""

from fleetwarden.server.app import App, Server, create_app

__all__ = ["App", "Server", "create_app"]
