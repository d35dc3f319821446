"""proagent: proactive assistants that decide when to help and what to offer."""

__version__ = "0.1.0"
__all__ = ["__version__"]
