"""``python -m proagent.cli``: the ``proagent`` command."""

from . import main

main()
