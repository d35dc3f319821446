"""The encrypted capture store (proagent.vault, ``capture --encrypt``): the database is SQLCipher,
the screenshots AES-256-GCM; nothing is readable without the key; every reader (stats, live's
follower, curate's image paths, review) reads it transparently with the key; a wrong or missing
key is one clear line."""

from __future__ import annotations

import io
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from refusal import refused  # noqa: E402
from system import require_binary, require_module  # noqa: E402

require_module("sqlcipher3", "cryptography")

from proagent import vault  # noqa: E402
from proagent.capture import Store  # noqa: E402
from proagent.cli import cli  # noqa: E402
from proagent.errors import DataError  # noqa: E402

PASS = "correct horse battery staple"


def _png(colour: tuple[int, int, int]) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(buf, format="PNG")
    return buf.getvalue()


def _encrypted_capture(folder: Path, n: int = 3, *, encrypt: bool = True) -> Path:
    """An encrypted capture folder made through the recorder's own Store (as capture --encrypt);
    ``encrypt=False``: a plain one (as capture)."""
    folder.mkdir(parents=True)
    if encrypt:
        vault.create_vault(folder)
    st = Store(folder)
    t = datetime(2025, 11, 3, 10, 0, 0)
    for i in range(n):
        eid = st.open_event("chrome" if i % 2 else "code", f"window {i}", t + timedelta(seconds=60 * i))
        data = _png((40 * i, 100, 200))
        st.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=t + timedelta(seconds=60 * i + 1),
            data=data,
            ext="png",
            file_hash="0" * 64,
            width=64,
            height=48,
            app="code",
            title=f"window {i}",
        )
        st.close_event(eid, t + timedelta(seconds=60 * i + 50))
    st.close()
    return folder


@pytest.fixture
def passphrase(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(vault.PASSPHRASE_ENV, PASS)
    vault._KEYS.clear()
    yield PASS
    vault._KEYS.clear()


class _MemoryKeyring:
    """A keyring backend in memory (one per 'account')."""

    priority = 1

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, user: str, pw: str) -> None:
        self.store[(service, user)] = pw

    def get_password(self, service: str, user: str) -> str | None:
        return self.store.get((service, user))


def test_nothing_is_readable_without_the_key(tmp_path: Path, passphrase: str) -> None:
    cap = _encrypted_capture(tmp_path / "cap")
    db = cap / "lifetrace.db"
    assert not db.read_bytes().startswith(b"SQLite format 3")
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        sqlite3.connect(db).execute("SELECT * FROM events").fetchall()
    shots = sorted((cap / "screenshots").iterdir())
    assert len(shots) == 3
    for p in shots:
        raw = p.read_bytes()
        assert raw.startswith(vault.MAGIC) and b"PNG" not in raw[:64] and b"IHDR" not in raw
    assert b"window" not in db.read_bytes() and PASS.encode() not in (cap / "vault.json").read_bytes()
    assert (cap / "vault.json").stat().st_mode & 0o077 == 0


def test_readers_read_it_transparently_with_the_passphrase(tmp_path: Path, passphrase: str) -> None:
    from proagent.live import LifeTraceFollower
    from proagent.sources.lifetrace import load_lifetrace

    cap = _encrypted_capture(tmp_path / "cap")
    log = load_lifetrace(cap / "lifetrace.db")
    assert [e.window_title for e in log.events] == ["window 0", "window 1", "window 2"]
    shot = log.events[1].screenshots[0]
    assert vault.read_file(shot.path) == _png((40, 100, 200))
    with vault.open_image(shot.path) as im:
        assert im.size == (64, 48) and im.convert("RGB").getpixel((0, 0)) == (40, 100, 200)
    r = CliRunner().invoke(cli, ["stats", str(cap)])
    assert r.exit_code == 0 and "3 events" in r.output, r.output
    f = LifeTraceFollower(cap, last_id=0)  # live --watch's reader
    try:
        assert f.changed() and not f.changed()
        st = Store(cap)  # the recorder continues the encrypted folder
        st.open_event("xterm", "later", datetime(2025, 11, 3, 11, 0, 0))
        st.close()
        assert f.changed() and f._max_id() == 4
    finally:
        f.close()


@pytest.mark.parametrize("encrypt", [True, False], ids=["encrypted", "plain"])
def test_readers_leave_the_capture_folder_as_it_was(tmp_path: Path, passphrase: str, encrypt: bool) -> None:
    """Readers of an encrypted capture left ``lifetrace.db-wal`` and ``-shm`` beside it (its header is
    encrypted, so it was not seen to be in WAL mode and was opened without ``immutable``)."""
    import hashlib

    from proagent.curate._pipeline import _check_images
    from proagent.sources.lifetrace import load_lifetrace
    from proagent.sources.lifetrace_schema import connect_read_only

    cap = _encrypted_capture(tmp_path / "cap", encrypt=encrypt)

    def listing() -> dict[str, str]:
        return {
            str(p.relative_to(cap)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(cap.rglob("*"))
            if p.is_file()
        }

    before = listing()
    assert ("vault.json" in before) is encrypt and "lifetrace.db" in before
    assert len(load_lifetrace(cap / "lifetrace.db").events) == 3
    con = connect_read_only(cap / "lifetrace.db")
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 3
    con.close()
    _check_images("cap", cap / "lifetrace.db")  # curate
    r = CliRunner().invoke(cli, ["stats", str(cap)])
    assert r.exit_code == 0 and "3 events" in r.output, r.output
    assert listing() == before  # no -wal, no -shm, nothing changed


@pytest.mark.parametrize("encrypt", [True, False], ids=["encrypted", "plain"])
def test_following_a_capture_that_is_not_recording_leaves_no_side_files(
    tmp_path: Path, passphrase: str, encrypt: bool
) -> None:
    """live --watch's reader opened a capture ``mode=ro`` even with no writer, which created
    ``lifetrace.db-wal``/``-shm`` that a read-only connection cannot remove (issue 35). It now opens
    it ``immutable`` until a writer appears, and still sees the rows the recorder adds meanwhile."""
    from proagent.live import LifeTraceFollower

    cap = _encrypted_capture(tmp_path / "cap", encrypt=encrypt)

    def names() -> list[str]:
        return sorted(p.name for p in cap.iterdir())

    before = names()
    assert not any(n.endswith(("-wal", "-shm")) for n in before)
    f = LifeTraceFollower(cap, last_id=0)
    try:
        assert f.changed() and not f.changed() and f._max_id() == 3
        assert names() == before  # following, no writer: nothing created
        st = Store(cap)  # the recorder starts again, writes, stops between two looks
        st.open_event("xterm", "later", datetime(2025, 11, 3, 11, 0, 0))
        st.close()
        assert f.changed() and f._max_id() == 4 and not f.changed()
        st = Store(cap)  # and writes while the follower looks
        st.open_event("xterm", "later still", datetime(2025, 11, 3, 11, 5, 0))
        assert f.changed() and f._max_id() == 5
        st.close()
    finally:
        f.close()


def test_curate_and_review_image_paths_decrypt(tmp_path: Path, passphrase: str) -> None:
    from proagent.curate._pipeline import _check_images, _copy_plain
    from proagent.curate._quality import sha256_file

    cap = _encrypted_capture(tmp_path / "cap")
    _check_images("cap", cap / "lifetrace.db")  # would refuse files that are not images
    src = sorted((cap / "screenshots").iterdir())[0]
    _copy_plain(src, tmp_path / "plain.png")
    assert (tmp_path / "plain.png").read_bytes() == _png((0, 100, 200))
    import hashlib

    assert sha256_file(src) == hashlib.sha256(_png((0, 100, 200))).hexdigest()  # dedup sees the image, not the nonce


@pytest.mark.parametrize(
    "env, needle",
    [
        (None, "set PROAGENT_PASSPHRASE"),
        ("wrong passphrase", "wrong passphrase"),
    ],
)
def test_a_missing_or_wrong_passphrase_is_one_line(
    tmp_path: Path, passphrase: str, monkeypatch: pytest.MonkeyPatch, env: str | None, needle: str
) -> None:
    cap = _encrypted_capture(tmp_path / "cap")
    vault._KEYS.clear()
    if env is None:
        monkeypatch.delenv(vault.PASSPHRASE_ENV)
    else:
        monkeypatch.setenv(vault.PASSPHRASE_ENV, env)
    for argv in (
        ["stats", str(cap)],
        [
            "live",
            "--watch",
            str(cap),
            "--out",
            str(tmp_path / "live"),
            "--yes-at",
            str(tmp_path / "yes.json"),
            "--model",
            "none",
        ],
    ):
        (tmp_path / "yes.json").write_text("[]")
        line = refused(tmp_path, argv, 1, needle, quiet=False)
        assert str(cap) in line or "cap" in line


def test_a_tampered_or_renamed_file_does_not_decrypt(tmp_path: Path, passphrase: str) -> None:
    cap = _encrypted_capture(tmp_path / "cap")
    a, b = sorted((cap / "screenshots").iterdir())[:2]
    blob = bytearray(a.read_bytes())
    blob[-1] ^= 1
    a.write_bytes(bytes(blob))
    with pytest.raises(DataError, match="cannot decrypt"):
        vault.read_file(a)
    b.rename(cap / "screenshots" / "renamed.png")
    with pytest.raises(DataError, match="cannot decrypt"):
        vault.read_file(cap / "screenshots" / "renamed.png")
    (cap / "vault.json").write_text('{"key": ')
    vault._KEYS.clear()
    with pytest.raises(DataError, match="damaged encryption record"):
        vault.key_for(cap / "vault.json")


@pytest.mark.parametrize(
    "change",
    [
        {"n": 2**40},
        {"n": 2**15 + 1},
        {"n": 2.0**15},
        {"n": "32768"},
        {"r": 64},
        {"p": 4},
        {"kdf": "argon2"},
        {"salt": "AAAA"},
    ],
)
def test_a_kdf_parameter_read_from_disk_is_bounded(tmp_path: Path, passphrase: str, change: dict) -> None:
    """A raised scrypt cost (2^40 asked every reader for terabytes: MemoryError) or any other value
    create_vault never writes is one DataError naming vault.json, before any derivation."""
    import json

    cap = _encrypted_capture(tmp_path / "cap")
    meta = json.loads((cap / "vault.json").read_text())
    meta["key"].update(change)
    (cap / "vault.json").write_text(json.dumps(meta))
    vault._KEYS.clear()
    with pytest.raises(DataError, match="damaged encryption record") as e:
        vault.key_for(cap / "vault.json")
    assert e.value.path == str(cap / "vault.json")
    line = refused(tmp_path, ["stats", str(cap)], 1, "damaged encryption record", quiet=False)
    assert "vault.json" in line


def test_a_plain_file_inside_an_encrypted_capture_is_refused(tmp_path: Path, passphrase: str) -> None:
    """A PNG that capture --encrypt did not write is not read as if it were the capture's."""
    from PIL import Image

    cap = _encrypted_capture(tmp_path / "cap")
    plain = sorted((cap / "screenshots").iterdir())[0]
    Image.new("RGB", (8, 8), "white").save(plain, format="PNG")
    with pytest.raises(DataError, match="unencrypted file inside an encrypted capture"):
        vault.read_file(plain)
    with pytest.raises(DataError, match="unencrypted file inside an encrypted capture"):
        vault.open_image(plain)
    outside = tmp_path / "plain.png"
    Image.new("RGB", (8, 8), "white").save(outside, format="PNG")
    assert vault.read_file(outside) == outside.read_bytes()


def test_keyring_key_is_per_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(vault.PASSPHRASE_ENV, raising=False)
    mine = _MemoryKeyring()
    monkeypatch.setattr(vault, "_keyring", lambda: mine)
    vault._KEYS.clear()
    cap = _encrypted_capture(tmp_path / "cap")
    assert len(mine.store) == 1 and b"key" in (cap / "vault.json").read_bytes()
    assert all(v not in (cap / "vault.json").read_text() for v in mine.store.values())  # the key is not on disk
    vault._KEYS.clear()
    from proagent.sources.lifetrace import load_lifetrace

    assert len(load_lifetrace(cap).events) == 3
    other = _MemoryKeyring()  # another account: its keyring does not hold the key
    monkeypatch.setattr(vault, "_keyring", lambda: other)
    vault._KEYS.clear()
    with pytest.raises(DataError, match="not in this account's OS keyring"):
        load_lifetrace(cap)
    monkeypatch.setattr(vault, "_keyring", lambda: None)
    with pytest.raises(DataError, match="no OS keyring"):
        vault.create_vault(tmp_path / "new")


def test_capture_encrypt_end_to_end_with_ocr(tmp_path: Path, passphrase: str) -> None:
    require_binary("Xvfb", "xterm")
    from xsession import XSession

    out = tmp_path / "enc"
    with XSession(480, 320) as xs:
        xs.xterm("secret-notes", "HELLO ENCRYPTED 42", geometry="40x8+0+0")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "proagent.cli",
                "capture",
                "--out",
                str(out),
                "--encrypt",
                "--duration",
                "6s",
                "--ocr-interval",
                "0.5",
            ],
            env=xs.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "lifetrace.db").read_bytes().startswith(b"SQLite format 3")
    assert all(p.read_bytes().startswith(vault.MAGIC) for p in (out / "screenshots").iterdir())
    con = vault.connect(out / "lifetrace.db")
    try:
        n_shots = con.execute("SELECT COUNT(*) FROM screenshots").fetchone()[0]
        deadline = time.monotonic() + 5
        ocr = con.execute("SELECT text_content FROM ocr_results").fetchall()
        while not ocr and time.monotonic() < deadline:
            time.sleep(0.2)
            ocr = con.execute("SELECT text_content FROM ocr_results").fetchall()
    finally:
        con.close()
    assert n_shots >= 1
    assert ocr and any("ENCRYPTED" in (t[0] or "") for t in ocr), ocr  # the OCR worker read the encrypted image


def test_capture_encrypt_refuses_a_plain_capture_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, passphrase: str
) -> None:
    require_binary("Xvfb")
    from xsession import XSession

    Store(tmp_path / "plain").close()
    with XSession(200, 100, wm=False) as xs:
        monkeypatch.setenv("DISPLAY", xs.display)
        refused(tmp_path, ["capture", "--out", str(tmp_path / "plain"), "--encrypt", "--no-ocr"], 1, "--encrypt")


def test_annotate_refuses_an_encrypted_capture_in_one_line(tmp_path: Path, passphrase: str) -> None:
    cap = _encrypted_capture(tmp_path / "cap")
    refused(
        tmp_path,
        ["annotate", str(cap), "--annotator", "text:mockllm/model", "--out", str(tmp_path / "ann")],
        1,
        "curate",
        outside=tmp_path / "ann",
    )
