"""fleetwarden: a multi-cluster control plane that keeps applications running when clusters fail."""

__version__ = "0.1.0"
