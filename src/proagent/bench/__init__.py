"""The When/How-to-Assist benchmark (ProAgentBench): samples at moments t (:mod:`.samples`: time
split, hard negatives, windows), the inspect task ``proagent/assist`` (:mod:`.tasks`), scorers
and metrics (:mod:`.scorers`, :mod:`.metrics`, :mod:`.similarity`), the shared model-run path
(:mod:`.running`: resume, lock, private data in the log folder) and the synthetic baseline of
section 4.2 (:mod:`.simulate`, its ``simulate.json`` a typed record in :mod:`.records`); ``eval
--threshold auto``'s choice of the P(Yes) threshold on the train split (:mod:`.threshold`).

Import from the modules: importing this package loads nothing (the task pulls in inspect_ai).
"""

__all__ = ["metrics", "records", "running", "samples", "scorers", "similarity", "simulate", "tasks", "threshold"]
