"""Local models: the in-process llama.cpp provider ``local/...`` registered with inspect
(:mod:`.local`, its engine arguments in :mod:`.engine`) and the bundled GGUF catalogue, assembled from installed packages and checked
by SHA-256, never downloaded (:mod:`.catalog`).

Import from the modules: importing this package loads nothing (the provider pulls in xllamacpp).
"""

__all__ = ["catalog", "engine", "local"]
