"""The opt-in encrypted capture store (``proagent capture --encrypt``): the database through
SQLCipher 4 (``sqlcipher3``), every screenshot file with AES-256-GCM (``cryptography``), one
random 256-bit key per capture folder.

Where the key lives, chosen when the folder is made:

* ``PROAGENT_PASSPHRASE`` set: the key is derived from it with scrypt (:data:`SCRYPT_N`,
  r = 8, p = 1, a random 16-byte salt; RFC 7914) and never stored;
* otherwise the OS keyring (``keyring``: Secret Service / KWallet on Linux, Keychain on macOS,
  Credential Locker on Windows), under service :data:`KEYRING_SERVICE` and the folder's random id.

``DIR/vault.json`` (0600) says which, holds the salt and a check value (a fixed text encrypted
with the key), so a wrong key is told apart from a damaged file. It holds no key.

Screenshot files keep their names; their bytes are :data:`MAGIC`, a 12-byte random nonce and
the AES-GCM ciphertext with its tag, the file name as associated data (a file renamed or swapped
for another fails to decrypt). Readers go through :func:`read_file` / :func:`open_image` and
:func:`connect`, which pass plain files and databases through unchanged, so every reader
(``stats``, ``eval``, ``annotate``, ``curate``, ``review``, ``live``) reads an encrypted capture
as it reads a plain one.

Threat model: protects the recorded screens against other accounts on the machine (with the
folder modes) and against a copied or stolen disk or backup; it does not protect them against
the logged-in user, or malware running as that user, who can read the keyring or the
passphrase's environment and the decrypted data in memory.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import secrets
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .errors import DataError
from .io import write_atomic

__all__ = [
    "KEYRING_SERVICE",
    "MAGIC",
    "PASSPHRASE_ENV",
    "SCRYPT_N",
    "VAULT_FILE",
    "connect",
    "create_vault",
    "decrypt",
    "encrypt",
    "is_encrypted_file",
    "key_for",
    "keyring_backend",
    "open_image",
    "read_file",
    "vault_of",
]

VAULT_FILE = "vault.json"
"""The file in a capture folder that marks it encrypted and says where its key is."""
MAGIC = b"PROAGENT-AESGCM1\n"
"""First bytes of an encrypted screenshot file."""
PASSPHRASE_ENV = "PROAGENT_PASSPHRASE"
"""Environment variable of the passphrase (when set at ``capture --encrypt``, the key comes from it)."""
KEYRING_SERVICE = "proagent-capture"
"""Service name of the keys kept in the OS keyring."""
SCRYPT_N = 2**15
"""scrypt cost (N = 2^15, r = 8: 32 MiB and about 0.1 s per derivation; RFC 7914's interactive-use
range, and OWASP's minimum for scrypt)."""
SCRYPT_N_RANGE = (2**14, 2**20)
"""The scrypt costs a ``vault.json`` may name (powers of two; 2^20 with r = 8 is 1 GiB and about 3 s,
RFC 7914's file-encryption setting). A cost read from disk is bounded before use: a damaged or
hostile record with N = 2^40 would otherwise ask for terabytes."""
_CHECK = b"proagent vault check"
_KEYS: dict[tuple[str, int], bytes] = {}


def _need() -> tuple[Any, Any]:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
    except ImportError:
        raise DataError("--encrypt", "needs cryptography and sqlcipher3: pip install 'proagent[encrypt]'") from None
    return AESGCM, Scrypt


def _scrypt(passphrase: str, salt: bytes, n: int) -> bytes:
    _, scrypt = _need()
    return scrypt(salt=salt, length=32, n=n, r=8, p=1).derive(passphrase.encode("utf-8"))


def encrypt(key: bytes, data: bytes, name: str) -> bytes:
    """``data`` encrypted with AES-256-GCM under ``key``, bound to the file ``name``."""
    aesgcm, _ = _need()
    nonce = secrets.token_bytes(12)
    return MAGIC + nonce + aesgcm(key).encrypt(nonce, data, name.encode("utf-8"))


def decrypt(key: bytes, blob: bytes, name: str, *, where: object = "file") -> bytes:
    """The plaintext of :func:`encrypt`'s output.

    Raises:
        DataError: wrong key, a damaged file, or one renamed from another name (``where`` names it).
    """
    from cryptography.exceptions import InvalidTag

    aesgcm, _ = _need()
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 12 + 16:
        raise DataError(where, "not an encrypted proagent file")
    nonce, ct = blob[len(MAGIC) : len(MAGIC) + 12], blob[len(MAGIC) + 12 :]
    try:
        return aesgcm(key).decrypt(nonce, ct, name.encode("utf-8"))
    except InvalidTag:
        raise DataError(where, "cannot decrypt: damaged, renamed, or encrypted with another key") from None


def _keyring() -> Any:
    """The OS keyring backend, ``None`` when none is usable (keyring's fail backend, or no package)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    kr = keyring.get_keyring()
    return None if isinstance(kr, fail.Keyring) else kr


keyring_backend = _keyring
"""The OS keyring backend capture --encrypt would use, ``None`` when none is usable (``proagent doctor``)."""


def create_vault(folder: Path) -> bytes:
    """Make ``folder`` an encrypted capture folder: a new random key (or one derived from
    ``PROAGENT_PASSPHRASE``), stored in the OS keyring when no passphrase is set, and
    ``folder/vault.json``. Returns the key.

    Raises:
        DataError: neither a passphrase nor a usable OS keyring (the message says how to set one),
            or the libraries are missing.
    """
    _need()
    folder = Path(folder)
    vid = str(uuid.uuid4())
    meta: dict[str, Any] = {
        "format": "proagent-vault",
        "version": 1,
        "id": vid,
        "database": "SQLCipher 4, raw 256-bit key",
        "files": "AES-256-GCM, file name as associated data",
    }
    passphrase = os.environ.get(PASSPHRASE_ENV)
    if passphrase:
        salt = secrets.token_bytes(16)
        key = _scrypt(passphrase, salt, SCRYPT_N)
        meta["key"] = {
            "source": "passphrase",
            "env": PASSPHRASE_ENV,
            "kdf": "scrypt",
            "n": SCRYPT_N,
            "r": 8,
            "p": 1,
            "salt": base64.b64encode(salt).decode(),
        }
    else:
        kr = _keyring()
        if kr is None:
            raise DataError(
                "--encrypt",
                f"no OS keyring is available to keep the key; set {PASSPHRASE_ENV} "
                "to derive it from a passphrase instead",
            )
        key = secrets.token_bytes(32)
        kr.set_password(KEYRING_SERVICE, vid, key.hex())
        meta["key"] = {"source": "keyring", "service": KEYRING_SERVICE, "username": vid}
    meta["check"] = base64.b64encode(encrypt(key, _CHECK, vid)).decode()
    write_atomic(folder / VAULT_FILE, json.dumps(meta, indent=1) + "\n", mode=0o600)
    _KEYS[(str((folder / VAULT_FILE).resolve()), (folder / VAULT_FILE).stat().st_mtime_ns)] = key
    return key


def vault_of(path: str | Path) -> Path | None:
    """The ``vault.json`` governing ``path`` (a capture folder, its database, or a screenshot in
    its ``screenshots/``), ``None`` for a plain one."""
    p = Path(path)
    for d in (p, p.parent, p.parent.parent):
        v = d / VAULT_FILE
        if v.is_file():
            return v
    return None


def key_for(vault: Path) -> bytes:
    """The key of the capture folder whose ``vault.json`` is ``vault`` (cached per process).

    Raises:
        DataError: the passphrase is not set or wrong, the keyring holds no key for the folder
            (another account or machine), or ``vault.json`` is damaged; one line naming the folder.
    """
    vault = Path(vault)
    cache = (str(vault.resolve()), vault.stat().st_mtime_ns)
    if cache in _KEYS:
        return _KEYS[cache]
    folder = vault.parent
    try:
        meta = json.loads(vault.read_text("utf-8"))
        spec, vid, check = meta["key"], str(meta["id"]), base64.b64decode(meta["check"])
        source = spec["source"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise DataError(
            vault, f"damaged encryption record ({e.__class__.__name__}); the capture cannot be read"
        ) from None
    if source == "passphrase":
        passphrase = os.environ.get(PASSPHRASE_ENV)
        if not passphrase:
            raise DataError(folder, f"an encrypted capture: set {PASSPHRASE_ENV} to its passphrase to read it")
        key = _scrypt(passphrase, *_scrypt_params(vault, spec))
        wrong = f"an encrypted capture: wrong passphrase in {PASSPHRASE_ENV}"
    elif source == "keyring":
        kr = _keyring()
        hexkey = kr.get_password(KEYRING_SERVICE, vid) if kr is not None else None
        if not hexkey:
            raise DataError(
                folder,
                "an encrypted capture whose key is not in this account's OS keyring "
                f"(service {KEYRING_SERVICE}, id {vid}); read it as the account that recorded it",
            )
        try:
            key = bytes.fromhex(hexkey)
        except ValueError:
            raise DataError(folder, "the key in the OS keyring is damaged") from None
        wrong = "an encrypted capture: the key in the OS keyring does not open it"
    else:
        raise DataError(vault, f"unknown key source {source!r}")
    try:
        if decrypt(key, check, vid) != _CHECK:
            raise DataError(folder, wrong)
    except DataError:
        raise DataError(folder, wrong) from None
    _KEYS[cache] = key
    return key


def _scrypt_params(vault: Path, spec: Any) -> tuple[bytes, int]:
    """The salt and cost of a passphrase record, checked: scrypt with r = 8, p = 1, N a power of
    two within :data:`SCRYPT_N_RANGE`, a salt of at least 16 bytes (what :func:`create_vault` writes).

    Raises:
        DataError: any other value, naming ``vault``.
    """
    try:
        n, salt = spec["n"], base64.b64decode(spec["salt"], validate=True)
        ok = (
            spec.get("kdf", "scrypt") == "scrypt"
            and spec.get("r", 8) == 8
            and spec.get("p", 1) == 1
            and type(n) is int
            and SCRYPT_N_RANGE[0] <= n <= SCRYPT_N_RANGE[1]
            and n & (n - 1) == 0
            and len(salt) >= 16
        )
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise DataError(vault, f"damaged encryption record ({e.__class__.__name__})") from None
    if not ok:
        lo, hi = SCRYPT_N_RANGE
        raise DataError(
            vault,
            f"damaged encryption record: key derivation must be scrypt with N a power of two "
            f"in 2^{lo.bit_length() - 1}..2^{hi.bit_length() - 1}, r=8, p=1 and a 16-byte salt",
        )
    return salt, n


def is_encrypted_file(path: str | Path) -> bool:
    """Whether ``path`` starts with :data:`MAGIC`."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read_file(path: str | Path) -> bytes:
    """The bytes of a screenshot file, decrypted when it is encrypted.

    Raises:
        OSError: the file cannot be read.
        DataError: encrypted, and the key is missing or wrong, or the file is damaged.
    """
    path = Path(path)
    data = path.read_bytes()
    vault = vault_of(path)
    if not data.startswith(MAGIC):
        if vault is not None:
            raise DataError(
                path,
                "an unencrypted file inside an encrypted capture (it was not written by "
                "capture --encrypt); move it out or re-record",
            )
        return data
    if vault is None:
        raise DataError(path, f"an encrypted screenshot outside its capture folder (no {VAULT_FILE} above it)")
    return decrypt(key_for(vault), data, path.name, where=path)


def open_image(path: str | Path) -> Any:
    """``PIL.Image.open`` of a screenshot, decrypting an encrypted one in memory."""
    from PIL import Image

    if is_encrypted_file(path) or vault_of(path) is not None:
        return Image.open(io.BytesIO(read_file(path)))
    return Image.open(path)


# ---------------------------------------------------------------------------- the database


@contextlib.contextmanager
def _as_sqlite3() -> Iterator[None]:
    """sqlcipher3's exceptions as the stdlib sqlite3 ones the readers catch."""
    import sqlcipher3

    try:
        yield
    except sqlcipher3.IntegrityError as e:
        raise sqlite3.IntegrityError(str(e)) from None
    except sqlcipher3.OperationalError as e:
        raise sqlite3.OperationalError(str(e)) from None
    except sqlcipher3.DatabaseError as e:
        raise sqlite3.DatabaseError(str(e)) from None
    except sqlcipher3.Error as e:
        raise sqlite3.Error(str(e)) from None


class _Cursor:
    def __init__(self, cur: Any) -> None:
        self._cur = cur

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)

    def __iter__(self) -> Iterator[Any]:
        with _as_sqlite3():
            yield from self._cur

    def fetchone(self) -> Any:
        with _as_sqlite3():
            return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        with _as_sqlite3():
            return self._cur.fetchall()

    def fetchmany(self, *a: Any) -> list[Any]:
        with _as_sqlite3():
            return self._cur.fetchmany(*a)


class _Connection:
    """A sqlcipher3 connection that raises, and takes row factories, as :mod:`sqlite3` does."""

    def __init__(self, raw: Any) -> None:
        self.__dict__["_raw"] = raw

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "row_factory" and value is sqlite3.Row:
            import sqlcipher3

            value = sqlcipher3.Row
        setattr(self._raw, name, value)

    def execute(self, *a: Any) -> _Cursor:
        with _as_sqlite3():
            return _Cursor(self._raw.execute(*a))

    def executemany(self, *a: Any) -> _Cursor:
        with _as_sqlite3():
            return _Cursor(self._raw.executemany(*a))

    def executescript(self, *a: Any) -> _Cursor:
        with _as_sqlite3():
            return _Cursor(self._raw.executescript(*a))

    def commit(self) -> None:
        with _as_sqlite3():
            self._raw.commit()

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._raw.__exit__(*exc)


def connect(db: str | Path, key: bytes | None = None, **kw: Any) -> Any:
    """``sqlite3.connect(db, **kw)``, or, for a database in an encrypted capture folder (or with
    ``key``), a SQLCipher connection keyed and checked (a wrong key fails here, not at the
    first query) that behaves as a :mod:`sqlite3` one.

    Raises:
        DataError: encrypted and the key is missing or wrong (see :func:`key_for`).
        sqlite3.DatabaseError: SQLite / SQLCipher cannot open the file.
    """
    target = str(db)
    local = Path(unquote(urlparse(target).path)) if target.startswith("file:") else Path(target)
    if key is None:
        vault = vault_of(local)
        if vault is None:
            return sqlite3.connect(db, **kw)
        key = key_for(vault)
    _need()
    import sqlcipher3

    with _as_sqlite3():
        raw = sqlcipher3.connect(db, **kw)
    con = _Connection(raw)
    raw.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        raw.close()
        raise DataError(
            local, "cannot open the encrypted database with this capture's key (damaged or replaced)"
        ) from None
    return con
