"""The ProactiveEval inspect tasks, in one place for the inspect entry point."""

from .guidance import dialogue_guide
from .planning import dialogue_plan

__all__ = ["dialogue_guide", "dialogue_plan"]
