"""Synthetic activity data: LifeTrace-format databases at scale
(:func:`generate`, the ``proagent synth`` command in :mod:`proagent.cli.synth`); what a run
wrote is a :class:`SynthManifest` (``synth.json``) of :class:`SynthUser` records."""

from .generator import DB_NAME, SynthConfig, generate, generate_user, intention_shares
from .records import SynthManifest, SynthUser

__all__ = ["DB_NAME", "SynthConfig", "SynthManifest", "SynthUser", "generate", "generate_user", "intention_shares"]
