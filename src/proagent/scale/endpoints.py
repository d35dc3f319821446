"""A pool of model endpoints (repeatable ``--model-base-url``) that shards are spread over."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UsageError

__all__ = ["endpoint_pool"]


def endpoint_pool(urls: Sequence[str], ray_address: str | None, option: str = "--model-base-url") -> list[str]:
    """The endpoints given, checked: several only with ``--ray`` (shard ``i`` uses endpoint
    ``i % n``; inspect's connection limit applies per shard, so per endpoint as many
    connections as shards run on it at once). Duplicates are kept (a URL given twice gets
    twice the shards).

    Raises:
        UsageError: more than one endpoint without ``--ray``, or an empty one.
    """
    urls = list(urls)
    if any(not u.strip() for u in urls):
        raise UsageError(option, "empty URL")
    if len(urls) > 1 and ray_address is None:
        raise UsageError(
            option,
            f"{len(urls)} endpoints given: a pool of endpoints needs --ray (shards are spread "
            "over them); give one without it",
        )
    return urls
