"""Results of runs: typed results records and ``results.json`` (:mod:`.results`), the decider
block (:mod:`.decider`), ablation grids (:mod:`.grid`, :mod:`.ablation`, :mod:`.effects`,
:mod:`.tidy`, :mod:`.ablation_page`) and the one HTML page builder (:mod:`.pages`).

Import from the modules: importing this package loads nothing heavy, so :mod:`.pages` stays
cheap for ``stats`` and ``live``.
"""

__all__ = ["ablation", "ablation_page", "decider", "effects", "grid", "pages", "results", "tidy"]
