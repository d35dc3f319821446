"""Models: the in-process llama.cpp provider ``local/...`` registered with inspect
(:mod:`.local`, its engine arguments in :mod:`.engine`), the bundled GGUF catalogue, assembled from installed packages and checked
by SHA-256, never downloaded (:mod:`.catalog`), and what proagent knows of model APIs over the network
(:mod:`.api`: the key variable a provider reads, ``openai/`` with a base URL refused).

Import from the modules: importing this package loads nothing (the provider pulls in xllamacpp).
"""

__all__ = ["api", "catalog", "engine", "local"]
