"""Phase 1, screening: one interface, two screeners.

* :class:`OcrScreener` (default, offline): RapidOCR (PP-OCR models shipped in the
  ``rapidocr`` wheel, onnxruntime) reads every text line with word boxes;
  :func:`~proagent.curate._detect.find_pii` finds personal data in each line and
  the matched characters are mapped back to their word boxes; faces are found with
  OpenCV's bundled Haar cascade (``haarcascade_frontalface_default.xml``).
* :class:`VlmScreener` (``--screener vlm:MODEL``): any vision model of inspect's
  model layer (``openai-api/<service>/<model>`` for an OpenAI-compatible endpoint)
  answers ProAgentBench's fields (risk level, types, action, scene description) as
  JSON; answers are repaired with ``json-repair`` and re-asked (tenacity) when they
  cannot be read; the regions to blur come from the OCR screener.

Risk from detected types (when no model judges it): a type of
:func:`~proagent.curate._detect.high_risk_types` -> ``high-risk`` (delete); any other
type or a face -> ``moderate`` (blur); nothing -> ``safe`` (retain). ``strict``
screening (neighbours of deleted screenshots, phase 3) treats any finding as high-risk.
"""

from __future__ import annotations

import base64
import functools
import io
from pathlib import Path
from typing import Any, Protocol

from ..errors import DataError, Resume, RunError, UsageError
from ..jsontext import first_json_object
from ..ocr import load_ocr
from ..prompt_files import prompt_template
from ._detect import clean_text, find_pii_lines, high_risk_types, pii_types, title_names
from .records import RISK_ACTION, Region, Screening

__all__ = ["OcrScreener", "Screener", "ScreenerError", "VlmScreener", "make_screener", "ocr_lines", "vlm_prompt"]


class ScreenerError(RunError):
    """The screening model could not be reached or failed (after its retries); re-running the
    same command resumes (finished screenings are kept)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem, resume=Resume.SAME_COMMAND)


_PAD = 3
"""Pixels added around each detected box (OCR boxes are tight)."""
_MIN_TEXT_SIDE = 8
"""Images with a side below this many pixels are not sent to OCR (no glyph fits)."""


class Screener(Protocol):
    """Anything that screens a screenshot for personal data."""

    name: str
    """Recorded in ``privacy.jsonl`` (``ocr``, ``vlm:MODEL``)."""

    def screen(self, image: Path, *, app: str, title: str, strict: bool = False, text: str = "") -> Screening:
        """Screen one image file; ``app``/``title`` describe its window, ``text`` is the OCR text the
        raw log already holds for it (``""``: none)."""
        ...


def _load_rgb(image: Path):  # noqa: ANN202
    from ..vault import open_image

    try:
        with open_image(image) as im:
            return im.convert("RGB")
    except (OSError, SyntaxError) as e:
        raise DataError(image, f"cannot decode image ({e})") from None


@functools.lru_cache(maxsize=1)
def _face_cascade():  # noqa: ANN202
    import cv2

    path = Path(cv2.data.haarcascades) / "haarcascade_frontalface_default.xml"
    cascade = cv2.CascadeClassifier(str(path))
    if cascade.empty():
        raise RuntimeError(f"OpenCV face cascade not loadable: {path}")
    return cascade


def find_faces(rgb) -> list[Region]:  # noqa: ANN001
    """Frontal faces in a PIL RGB image (OpenCV Haar cascade, scale 1.1, 5 neighbours,
    at least 40x40 pixels, the cascade's usual settings for photos)."""
    import cv2
    import numpy as np

    gray = cv2.cvtColor(np.asarray(rgb), cv2.COLOR_RGB2GRAY)
    found = _face_cascade().detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(40, 40))
    return [Region(int(x), int(y), int(x + w), int(y + h), "face") for (x, y, w, h) in (found if len(found) else [])]


def _char_boxes(line: str, line_box: list, words: tuple | None) -> list[tuple[int, int, int, int] | None]:
    """One box per character of ``line``: the box of the OCR word holding it, or a
    proportional slice of the line box when the words cannot be aligned."""
    xs = [p[0] for p in line_box]
    ys = [p[1] for p in line_box]
    lx0, ly0, lx1, ly1 = min(xs), min(ys), max(xs), max(ys)
    n = max(1, len(line))
    boxes: list[tuple[int, int, int, int] | None] = [
        (int(lx0 + (lx1 - lx0) * i / n), int(ly0), int(lx0 + (lx1 - lx0) * (i + 1) / n) + 1, int(ly1)) for i in range(n)
    ]
    if not words:
        return boxes
    pos = 0
    for w in words:
        text, _score, pts = w[0], w[1], w[2]
        if not text:
            continue
        k = line.find(text, pos)
        if k < 0:
            continue
        wx = [p[0] for p in pts]
        wy = [p[1] for p in pts]
        box = (int(min(wx)), int(min(wy)), int(max(wx)) + 1, int(max(wy)) + 1)
        for i in range(k, k + len(text)):
            boxes[i] = box
        pos = k + len(text)
    return boxes


def _risk(types: set[str], strict: bool) -> str:
    if not types:
        return "safe"
    if strict or types & high_risk_types():
        return "high-risk"
    return "moderate"


def describe_scene(app: str, title: str, n_lines: int, types: set[str], faces: int) -> str:
    """A scene description made without a vision model: the window (title cleaned),
    how much text it showed and what kinds of data were found (never the data)."""
    where = app or "unknown application"
    t = clean_text(title).strip()
    if t and t != app:
        where += f" window '{t[:120]}'"
    parts = [f"{where}; {n_lines} line(s) of text"]
    if faces:
        parts.append(f"{faces} face(s)")
    if types:
        parts.append("contained " + ", ".join(sorted(types)))
    return "; ".join(parts)


def ocr_lines(image: Path) -> list[str]:
    """The raw text lines RapidOCR reads in an image (for measuring leaks; never stored).

    Raises:
        DataError: the image cannot be decoded.
    """
    import numpy as np

    res = load_ocr()(np.asarray(_load_rgb(image))[:, :, ::-1])
    return list(res.txts or ()) if res.boxes is not None else []


class OcrScreener:
    """The offline default screener: OCR + text detectors + face detector."""

    name = "ocr"

    def __init__(self, faces: bool = True) -> None:
        self.faces = faces
        """Run the face detector."""

    def locate(
        self, image: Path, strict: bool = False, text: str = "", names: tuple[str, ...] = ()
    ) -> tuple[list[Region], list[str], int]:
        """Regions of personal data, the cleaned text lines and the number of lines read.
        ``names``: people the window's title names (:func:`~proagent.curate._detect.title_names`),
        found wherever the screen shows them.

        ``text`` is the OCR text the raw log holds for the image (capture's worker and LifeTrace
        both write RapidOCR's lines, one a line): when it is given and no line of it holds
        personal data, the image is not read again (no text region to blur; faces are still
        looked for). When a line does, or no text is given, RapidOCR reads the image with word
        boxes, which locate what to blur.

        Raises:
            DataError: the image cannot be decoded.
        """
        import numpy as np

        rgb = _load_rgb(image)
        regions: list[Region] = []
        cleaned: list[str] = []
        txts: list[str] = []
        words_all: list = []
        recorded = [line for line in text.split("\n") if line.strip()]
        if recorded and not any(find_pii_lines(recorded, strict=strict, names=names)):
            if self.faces:
                regions.extend(find_faces(rgb))
            return regions, recorded, len(recorded)
        if min(rgb.size) >= _MIN_TEXT_SIDE:  # nothing legible fits in a thumbnail smaller than one glyph
            res = load_ocr()(np.asarray(rgb)[:, :, ::-1], return_word_box=True)
            txts = list(res.txts or ()) if res.boxes is not None else []
            words_all = list(res.word_results or ()) if txts else []
        for i, (line, findings) in enumerate(zip(txts, find_pii_lines(txts, strict=strict, names=names))):
            cleaned.append(clean_text(line, findings))
            if not findings:
                continue
            words = words_all[i] if i < len(words_all) else None
            cb = _char_boxes(line, res.boxes[i].tolist(), words)  # type: ignore[possibly-undefined]
            for f in findings:
                bs = [b for b in cb[f.start : f.end] if b is not None]
                if not bs:
                    continue
                regions.append(
                    Region(
                        max(0, min(b[0] for b in bs) - _PAD),
                        max(0, min(b[1] for b in bs) - _PAD),
                        min(rgb.width, max(b[2] for b in bs) + _PAD),
                        min(rgb.height, max(b[3] for b in bs) + _PAD),
                        f.type,
                    )
                )
        if self.faces:
            regions.extend(find_faces(rgb))
        return regions, cleaned, len(txts)

    def screen(self, image: Path, *, app: str, title: str, strict: bool = False, text: str = "") -> Screening:
        """Screen one image (see the module docstring for the risk rule; ``text``: :meth:`locate`)."""
        regions, cleaned, n_lines = self.locate(image, strict=strict, text=text, names=title_names(title))
        types = {r.type for r in regions}
        risk = _risk(types, strict)
        n_faces = sum(r.type == "face" for r in regions)
        return Screening(
            risk=risk,
            types=tuple(sorted(types)),
            action=RISK_ACTION[risk],
            scene=describe_scene(app, title, n_lines, types - {"face"}, n_faces),
            regions=tuple(regions),
            ocr_text="\n".join(cleaned),
            screener=self.name,
        )


def vlm_prompt(app: str, title: str, *, strict: bool) -> str:
    """The VLM screener's question about one screenshot (``prompts/curate/vlm_screen.txt``), listing
    the types of :func:`~proagent.curate._detect.pii_types` as they are registered now."""
    return (
        prompt_template("curate", "vlm_screen.txt")
        .substitute(
            app=app,
            title=clean_text(title),
            types=", ".join(pii_types() + ("face", "chat")),
            strict="\nBe strict: a neighbouring screenshot was deleted; any sensitive data means delete."
            if strict
            else "",
        )
        .strip()
    )


class VlmScreener:
    """Screening by a vision-language model through inspect's model layer."""

    def __init__(
        self,
        model: str,
        *,
        attempts: int = 3,
        locator: OcrScreener | None = None,
        base_url: str | None = None,
        model_args: dict[str, Any] | None = None,
        max_retries: int = 3,
        timeout: int = 120,
    ) -> None:
        self.model_name = model
        """inspect model name, e.g. ``openai-api/vllm/Qwen2.5-VL-7B-Instruct``."""
        self.name = f"vlm:{model}"
        self.attempts = attempts
        """Answers asked for at most per screenshot before giving up (fail safe: delete)."""
        self.max_retries = max_retries
        """Retries of a failed HTTP request (inspect's provider retry with backoff)."""
        self.timeout = timeout
        """Seconds allowed for one request."""
        self.locator = locator if locator is not None else OcrScreener()
        """Finds the regions to blur (a VLM gives no boxes)."""
        self._base_url = base_url
        self._model_args = model_args or {}
        self._model = None

    def _get_model(self):  # noqa: ANN202
        if self._model is None:
            from inspect_ai.model import get_model

            from ..bench.running import show_retry_progress

            show_retry_progress(self.max_retries + 1)  # a line per retry, not minutes of silence
            self._model = get_model(self.model_name, base_url=self._base_url, memoize=False, **self._model_args)
        return self._model

    def _ask(self, image: Path, app: str, title: str, strict: bool) -> dict[str, Any]:
        import asyncio

        from inspect_ai.model import (
            ChatMessageUser,
            ContentImage,
            ContentText,
            GenerateConfig,
        )

        rgb = _load_rgb(image)
        buf = io.BytesIO()
        rgb.save(buf, format="PNG")
        uri = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
        prompt = vlm_prompt(app, title, strict=strict)
        msg = ChatMessageUser(content=[ContentText(text=prompt), ContentImage(image=uri)])
        config = GenerateConfig(temperature=0.0, max_tokens=400, max_retries=self.max_retries, timeout=self.timeout)
        try:
            out = asyncio.run(self._get_model().generate([msg], config=config))
        except Exception as e:  # noqa: BLE001  (provider errors come in many types)
            from ..bench.running import api_error_line

            raise ScreenerError(
                f"screening model {self.model_name} failed: {api_error_line(e, self.max_retries + 1)}"
            ) from None
        return _parse_answer(out.completion)

    def screen(self, image: Path, *, app: str, title: str, strict: bool = False, text: str = "") -> Screening:
        """Ask the model (up to ``attempts`` times); regions from the OCR locator (given ``text``).
        After ``attempts`` unreadable answers the screenshot is rated high-risk (deleted)."""
        import tenacity

        try:
            ans = tenacity.Retrying(
                stop=tenacity.stop_after_attempt(self.attempts),
                retry=tenacity.retry_if_exception_type(ValueError),
                reraise=True,
            )(self._ask, image, app, title, strict)
        except ValueError:
            return Screening(
                "high-risk",
                (),
                "delete",
                describe_scene(app, title, 0, set(), 0) + "; screening model gave no readable answer",
                (),
                "",
                self.name,
            )
        regions, cleaned, n_lines = self.locator.locate(image, strict=strict, text=text, names=title_names(title))
        types = set(ans["types"]) | {r.type for r in regions}
        risk, action = ans["risk_level"], ans["action"]
        if strict and types and action != "delete":
            risk, action = "high-risk", "delete"
        if action == "blur" and not regions:
            rgb = _load_rgb(image)
            regions = [Region(0, 0, rgb.width, rgb.height, "vlm")]
        scene = clean_text(ans["scene_description"]) or describe_scene(app, title, n_lines, types, 0)
        return Screening(risk, tuple(sorted(types)), action, scene, tuple(regions), "\n".join(cleaned), self.name)


def _parse_answer(text: str) -> dict[str, Any]:
    """The screener's JSON answer, repaired; ``ValueError`` when it has no usable fields."""
    obj = first_json_object(text or "")
    if obj is None:
        raise ValueError("no JSON object in the answer")
    risk = str(obj.get("risk_level", obj.get("risk", ""))).strip().lower().replace("_", "-").replace(" ", "-")
    if risk == "high":
        risk = "high-risk"
    if risk not in RISK_ACTION:
        raise ValueError(f"risk level {risk!r} is not safe/moderate/high-risk")
    action = str(obj.get("action", "")).strip().lower() or RISK_ACTION[risk]
    if action not in ("retain", "blur", "delete"):
        raise ValueError(f"action {action!r} is not retain/blur/delete")
    raw_types = obj.get("types", obj.get("type", []))
    if isinstance(raw_types, str):
        raw_types = [raw_types]
    types = sorted({str(t).strip().lower().replace(" ", "_") for t in raw_types if str(t).strip()} - {"none"})
    scene = obj.get("scene_description", obj.get("scene", ""))
    return {"risk_level": risk, "action": action, "types": types, "scene_description": str(scene or "")}


def make_screener(spec: str, *, base_url: str | None = None, model_args: dict[str, Any] | None = None) -> Screener:
    """``ocr`` -> :class:`OcrScreener`; ``vlm:MODEL`` -> :class:`VlmScreener`.

    Raises:
        proagent.errors.UsageError: any other spec (``--screener``).
    """
    if spec == "ocr":
        return OcrScreener()
    if spec.startswith("vlm:") and len(spec) > 4:
        return VlmScreener(spec[4:], base_url=base_url, model_args=model_args)
    raise UsageError("--screener", f"unknown screener {spec!r}: use 'ocr' or 'vlm:MODEL'")
