"""Synthetic activity data: LifeTrace-format databases at scale
(:func:`generate`, the ``proagent synth`` command in :mod:`proagent.cli.synth`)."""

from .generator import DB_NAME, SynthConfig, generate, generate_user, intention_shares

__all__ = ["DB_NAME", "SynthConfig", "generate", "generate_user", "intention_shares"]
