"""The one HTML page builder: every page proagent writes (stats, ablation, dialogue results,
interactive local pages) is a :func:`page` with the one stylesheet :data:`CSS`.

Pages are self-contained (no network: figures are inlined as data URIs) and escape every
value they show.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["CSS", "escape", "figure", "page", "table"]

CSS = """body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","Microsoft YaHei",sans-serif;
max-width:1200px;margin:2em auto;padding:0 1em;color:#222}table{border-collapse:collapse;margin:.6em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-size:13px;vertical-align:top}
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}td.text{text-align:left}
figure{margin:1.5em 0}img{max-width:100%;border:1px solid #eee}figcaption,.note{color:#666;font-size:13px}
code{background:#f5f5f5;padding:0 3px}.assistant{color:#124}.user{color:#555}
header.bar{padding:8px 12px;background:#333;color:#eee;display:flex;gap:16px;align-items:center}
#stage{position:relative;display:inline-block;margin:12px 0}#shot{max-height:calc(100vh - 140px);display:block;border:0}
.box{position:absolute;border:2px solid #f33;background:rgba(255,0,0,.15)}
.box span{position:absolute;top:-16px;left:0;font-size:11px;background:#f33;color:#fff;padding:0 3px}
#decision{font-weight:bold}.retain{color:#6c6}.blur{color:#fc3}.delete{color:#f66}
#offers li{list-style:none;border:1px solid #ccc;border-radius:6px;padding:.6rem .8rem;margin:.5rem 0}
#offers li.answered{opacity:.55}.meta{font-size:.8rem;color:#666}#offers button{margin-right:.4rem}
#offers li.answered[data-response=accepted]{opacity:1}#offers .line{display:flex;gap:.5rem;align-items:baseline;cursor:pointer}
#offers .line .text{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}#offers li.open .line .text{white-space:normal}
#offers .app{font-weight:600;font-size:.85rem;color:#345;white-space:nowrap}#offers .body{margin-top:.4rem}
#offers .turn{margin:.4rem 0;padding:.3rem .6rem;border-left:3px solid #9ab}#offers .turn.user{border-color:#ccc;color:#555}
#offers .turn pre{background:#f5f5f5;padding:.5rem;overflow-x:auto;position:relative}#offers .copy{font-size:.7rem;float:right}
#offers .ask input{width:70%}#offers .rated{font-weight:bold}
#strip svg{width:100%;height:auto;display:block}#strip [data-i]{cursor:pointer}#strip .sel{stroke:#000;stroke-width:1.5}
#show{display:flex;gap:14px;align-items:flex-start}#events{width:36%;max-height:70vh;overflow-y:auto;margin:0;padding:0;list-style:none;font-size:13px}
#events li{display:flex;gap:6px;padding:3px 6px;border-bottom:1px solid #eee;cursor:pointer}#events li.sel{background:#e4edff}
#events .t{color:#666;font-variant-numeric:tabular-nums}#events .a{font-weight:600;white-space:nowrap}
#events .ti{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.chip{display:inline-block;width:10px;height:10px;border-radius:2px;flex:none;align-self:center}
.badge{font-size:11px;border-radius:3px;padding:0 4px;background:#eee}.badge.llm{background:#f3d6f3}.badge.accepted{background:#cfc}.badge.dismissed{background:#fcc}
#detail{flex:1;min-width:0}#detail h2{font-size:1.1em;margin:.2em 0}#detail h3{font-size:.95em;margin:.6em 0 .2em}
#detail .found{border-left:3px solid #c4c;padding:.1em .6em;margin:.5em 0}#detail .turn{margin:.25em 0}
#detail img.big{width:100%;height:55vh;object-fit:contain;object-position:left top;display:block;image-rendering:auto}#thumbs img{height:44px;margin:2px;cursor:pointer;border:2px solid transparent}
#thumbs img.sel{border-color:#36c}#ocr{white-space:pre-wrap;background:#f7f7f7;padding:.5em;max-height:30vh;overflow:auto;font-size:12px}
mark{background:#ff6}header.bar .about{color:#ccc;font-size:13px}header.bar a{color:#9cf}"""
"""The stylesheet of every page (system fonts, CJK fallbacks for Chinese app names), the
interactive ones included: the review page (``header.bar``, ``#stage``, ``#shot``, ``.box``,
decision colours), live's offer list (``#offers``) and ``proagent show``'s day (``#strip``, ``#events``,
``#detail``)."""

escape = html.escape


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], *, raw_columns: Iterable[int] = ()) -> str:
    """An HTML table of ``rows`` under the header ``head``.

    Cells are shown as ``str(cell)`` and escaped, except the columns whose index is in
    ``raw_columns``: those already hold HTML built by the caller (escaped there) and are
    left-aligned.
    """
    raw = set(raw_columns)
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    trs = "".join(
        "<tr>"
        + "".join(f'<td class="text">{c}</td>' if i in raw else f"<td>{escape(str(c))}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def figure(png: bytes, caption: str, links: dict[str, str] | None = None) -> str:
    """A PNG inlined as a data URI with a caption and optional links (label -> relative href)."""
    data = base64.b64encode(png).decode("ascii")
    extra = "".join(f' · <a href="{escape(href)}">{escape(label)}</a>' for label, href in (links or {}).items())
    return (
        f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{escape(caption)}{extra}</figcaption></figure>"
    )


def page(title: str, body: str, *, footer: str = "") -> str:
    """A whole HTML document: ``title`` as ``<title>`` and ``<h1>``, then ``body`` (HTML).

    Args:
        title: plain text (escaped).
        body: HTML built with :func:`table`, :func:`figure` and escaped text.
        footer: HTML placed after the body (e.g. a note on where the numbers are; an
            interactive page's script).
    """
    t = escape(title)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{t}</title>'
        f"<style>{CSS}</style></head><body><h1>{t}</h1>{body}{footer}</body></html>\n"
    )
