"""The inspect_evals-style listing (``eval.yaml`` beside each task) matches the registered tasks:
names, scorers, metrics, and sample counts on the named data when it is present."""

from __future__ import annotations

import inspect as pyinspect
from pathlib import Path

import pytest
import yaml
from inspect_ai._util.registry import registry_find, registry_info

import proagent
import proagent._registry  # noqa: F401  (registers the tasks)

PACKAGE = Path(proagent.__file__).parent
ROOT = PACKAGE.parents[1]
NOT_LISTED = {
    "proagent/annotate_events",  # data preparation (proagent annotate), not a benchmark
    "proagent/help",
}  # live's help measured on a person's own annotated log: no public data holds the replies
FIELDS = {
    "title",
    "description",
    "arxiv",
    "group",
    "contributors",
    "version",
    "tasks",
    "dataset",
    "metrics",
    "tags",
    "metadata",
}


def _listings() -> dict[Path, dict]:
    return {p: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("eval.yaml"))}


def _registered() -> dict[str, object]:
    return {
        registry_info(t).name: t for t in registry_find(lambda i: i.type == "task" and i.name.startswith("proagent/"))
    }


def test_every_registered_task_is_listed_once_beside_its_code() -> None:
    listed: dict[str, Path] = {}
    for path, doc in _listings().items():
        assert FIELDS <= set(doc), f"{path}: missing {FIELDS - set(doc)}"
        assert doc["arxiv"].startswith("https://arxiv.org/abs/") and doc["tasks"] and doc["metrics"]
        assert doc["metadata"]["requires_internet"] is False
        for t in doc["tasks"]:
            assert t["registry_name"] == f"proagent/{t['name']}" and t["registry_name"] not in listed
            assert isinstance(t["dataset_samples"], int) and t["dataset_samples"] > 0
            listed[t["registry_name"]] = path
    registered = _registered()
    assert set(listed) == set(registered) - NOT_LISTED and NOT_LISTED <= set(registered)
    for name, path in listed.items():  # the listing sits in the package folder of the task's module
        fn = pyinspect.unwrap(registered[name])
        assert Path(pyinspect.getfile(fn)).parent == path.parent, name


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("eval.yaml")), ids=lambda p: p.parent.name)
def test_listing_matches_the_task(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    registered = _registered()
    metrics = [m["name"] for m in doc["metrics"]]
    seen: set[str] = set()
    for t in doc["tasks"]:
        args = dict(t["task_args"])
        data = ROOT / args["data"]
        if not data.exists():
            data = Path("/work/shared") / Path(args["data"]).relative_to("../shared")
        if not data.exists():
            pytest.skip(f"{args['data']} not present")
        args["data"] = str(data)
        task = registered[t["registry_name"]](**args)
        assert len(task.dataset) == t["dataset_samples"], t["name"]
        (scorer,) = task.scorer
        info = registry_info(scorer)
        assert info.name == t["scorer"]
        names = [registry_info(m).name for m in info.metadata["metrics"]]
        assert set(names) <= set(metrics), set(names) - set(metrics)
        seen.update(names)
    assert seen == set(metrics)  # no metric listed that no task reports
