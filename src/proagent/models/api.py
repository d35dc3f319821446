"""Model APIs reached over the network (any inspect provider but ``local/`` and ``mockllm/``): the
provider arguments proagent adds, and the environment variable a provider reads its key from.

Two facts of inspect_ai 0.3.285 (``inspect_ai/model/_providers/openai.py``,
``openai_compatible.py``) that every command meets:

* ``openai/<name>`` treats a name it does not know (``qwen2.5``, any local model's name) as OpenAI's
  newest model: it sends it to the Responses API (``/v1/responses``), which llama.cpp's server,
  Ollama, LM Studio and most OpenAI-compatible servers do not serve, and drops ``temperature``.
  With a base URL (``--model-base-url`` or ``OPENAI_BASE_URL``) :func:`responses_refusal` says so
  in one line and names the provider that speaks Chat Completions with the options proagent sets:
  ``openai-api/<provider>/<name>``.
* ``openai-api/<service>/<name>`` reads its key from ``<SERVICE>_API_KEY`` (``VLLM_API_KEY`` for
  ``openai-api/vllm/...``) and ``openai/...`` from ``OPENAI_API_KEY``: :func:`key_variable` names
  the one a message should tell the person to check.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["key_variable", "responses_refusal", "uses_base_url"]


def uses_base_url(model: str, base_url: str | None) -> bool:
    """Whether an ``openai/...`` model is sent to another server than OpenAI's: ``base_url``
    (``--model-base-url``) or ``OPENAI_BASE_URL`` is set."""
    return str(model).startswith("openai/") and bool(base_url or os.environ.get("OPENAI_BASE_URL"))


def responses_refusal(model: str, base_url: str | None, api: Any) -> str | None:
    """Why ``model`` cannot be used with ``base_url``, or ``None``: an ``openai/<name>`` sent to
    another server (:func:`uses_base_url`) whose inspect provider (``api``: the model's ``.api``)
    would use the Responses API (see the module docstring). The line names the fix,
    ``openai-api/<provider>/<name>`` and its key variable."""
    if not uses_base_url(model, base_url) or not getattr(api, "responses_api", False):
        return None
    name = str(model).removeprefix("openai/")
    return (
        f"with a base URL, openai/{name} would go to OpenAI's Responses API (/v1/responses, no temperature), "
        f"which local OpenAI-compatible servers do not serve: use --model openai-api/<provider>/{name}, "
        f"its key in <PROVIDER>_API_KEY (e.g. --model openai-api/vllm/{name} with VLLM_API_KEY; any value for a "
        "server that checks none)"
    )


def key_variable(model: str, api: Any = None) -> str | None:
    """The environment variable the provider of ``model`` reads its API key from: the first of the
    provider's own list (inspect's ``ModelAPI.api_key_vars``) when ``api`` (a model's ``.api``) is
    given, else by name: ``openai-api/<service>/...`` -> ``<SERVICE>_API_KEY`` (``-`` as ``_``),
    ``openai/azure/...`` -> ``AZUREAI_OPENAI_API_KEY``, any other ``<provider>/...`` ->
    ``<PROVIDER>_API_KEY`` (``openai/`` -> ``OPENAI_API_KEY``, ``vllm/`` -> ``VLLM_API_KEY``).
    ``None`` for a model that reads no key (``local/``, ``mockllm/``, ``none``)."""
    names = list(getattr(api, "api_key_vars", None) or [])
    if names and isinstance(names[0], str):
        return names[0]
    parts = str(model).split("/")
    if len(parts) < 2 or parts[0] in ("local", "mockllm", "none", "hf", "llama-cpp-python", "transformer_lens"):
        return None
    if parts[0] == "openai-api" and len(parts) >= 3:
        return parts[1].upper().replace("-", "_") + "_API_KEY"
    if parts[0] == "openai" and parts[1] == "azure":
        return "AZUREAI_OPENAI_API_KEY"
    return parts[0].upper().replace("-", "_") + "_API_KEY"
