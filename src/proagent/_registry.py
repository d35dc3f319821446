"""inspect_ai entry point: registers proagent's model API and tasks.

inspect imports this module (``[project.entry-points.inspect_ai]``) when it
resolves a ``local/...`` model or a ``proagent/...`` task. Imports of optional
runtimes stay inside the factories.
"""

from inspect_ai.model import modelapi

from .annotate.task import annotate_events  # noqa: F401  (registers proagent/annotate_events)
from .bench.running import inspect_hooks_for_tasks
from .bench.tasks import assist  # noqa: F401  (registers proagent/assist)
from .dialogue.tasks import (  # noqa: F401  (registers proagent/dialogue_plan, proagent/dialogue_guide)
    dialogue_guide,
    dialogue_plan,
)
from .live.tasks import help_task  # noqa: F401  (registers proagent/help)

inspect_hooks_for_tasks()  # an unknown -T argument is an error; mockllm/ counts tokens offline


@modelapi(name="local")
def local():  # noqa: ANN201
    """In-process GGUF models on llama.cpp (see ``proagent.models.local``)."""
    from .models.local import LocalLlamaAPI

    return LocalLlamaAPI
