"""Shared pieces of ingestion: limits, the per-file report, and robust text decoding."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import re
import unicodedata
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from citesum.errors import IngestError, UnreadableError

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
# Share of control characters above which "text" is really binary content.
_BINARY_CONTROL_RATIO = 0.10
_WESTERN = ("cp1252", "latin_1", "iso8859_15")


#: how the name of a gzip-compressed file ends: it is read as the file it holds ("FAQ.gz", "manual.pdf.gz", as
#: Debian ships its documentation)
GZIP_SUFFIX = ".gz"


def gzipped_name(name: str) -> str | None:
    """The name of the file a gzip-compressed file holds ("README.Debian" for "README.Debian.gz"), or None for a
    name that is not a gzip file's (nor a file compressed twice)."""
    if not name.lower().endswith(GZIP_SUFFIX) or len(name) == len(GZIP_SUFFIX):
        return None
    inner = name[: -len(GZIP_SUFFIX)]
    return None if inner.lower().endswith(GZIP_SUFFIX) else inner


def gunzipped(data: bytes, max_bytes: int) -> bytes:
    """The bytes a gzip file holds, inflated no further than ``max_bytes`` (a small file can inflate to
    gigabytes): :class:`UnreadableError` for a corrupt or cut file, or one that holds more than that."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            inflated = stream.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise UnreadableError(f"corrupt gzip file ({exc})") from exc
    if len(inflated) > max_bytes:
        raise UnreadableError(f"it inflates past the {max_bytes:,}-byte limit (--max-bytes)")
    return inflated


def file_bytes(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A file's content as its reader reads it: a gzip file's inflated (see :func:`gunzipped`)."""
    data = path.read_bytes()
    return gunzipped(data, max_bytes) if gzipped_name(path.name) is not None else data


@dataclass(frozen=True)
class IngestOptions:
    """Limits and field names that apply to every file of one ingestion run."""

    max_bytes: int = DEFAULT_MAX_BYTES
    # .docx/.xlsx are zip files: refuse archives that inflate past this, or past this many times their own size
    # (zip bombs), counted on the bytes inflating gives (formats.check_zip), not on the sizes they declare.
    max_uncompressed_bytes: int = 200 * 1024 * 1024
    max_compression_ratio: float = 200.0
    rows_per_block: int = 25
    json_id_field: str = "id"
    json_title_field: str = "title"
    json_text_field: str = "text"


@dataclass
class FileReport:
    """What happened to one file (or one record inside a file)."""

    path: str
    status: Literal["ingested", "skipped"]
    documents: int = 0
    reason: str = ""
    format: str = ""
    #: the document id given to the file (its records are ``id#record``); empty for folders
    document_id: str = ""
    #: skipped because the file could not be read this time (permission, size limit, I/O error, a corrupt or
    #: locked file), not for what it holds: ``index --sync`` keeps the documents it gave before
    unreadable: bool = False


@dataclass
class IngestReport:
    """Every file an ingestion run looked at, ingested or skipped with the reason."""

    files: list[FileReport] = field(default_factory=list)

    @property
    def ingested(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "ingested"]

    @property
    def skipped(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "skipped"]

    @property
    def document_count(self) -> int:
        return sum(f.documents for f in self.files)

    def to_json(self) -> str:
        return json.dumps(
            {
                "documents": self.document_count,
                "ingested_files": len(self.ingested),
                "skipped_files": len(self.skipped),
                "files": [asdict(f) for f in self.files],
            },
            indent=2,
        )


def path_text(path: str | Path) -> str:
    """A path as text that can be stored and printed: bytes of a file name that are not UTF-8 (a Latin-1
    ``\xe9`` from an old archive) appear as ``\xe9`` escapes instead of failing every later step."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def shown(text: str) -> str:
    """``text`` safe to print on a terminal line: control characters (newline, tab, escape sequences) and
    invisible format characters (bidi overrides, which can disguise ``txt.exe`` as ``exe.txt``) escaped."""
    return "".join(c if unicodedata.category(c) not in ("Cc", "Cf") else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def looks_binary(data: bytes) -> bool:
    """True for bytes that are not text in any encoding: NUL bytes or many control characters."""
    sample = data[:8192]
    if not sample:
        return False
    if b"\x00" in sample and not _is_utf16(sample):
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    controls -= len(_OVERSTRIKE_BYTES.findall(sample))  # a terminal's bold and underline, not binary
    return controls / len(sample) > _BINARY_CONTROL_RATIO


def _is_utf16(sample: bytes) -> bool:
    return sample.startswith((b"\xff\xfe", b"\xfe\xff"))


#: a character struck over by another after a backspace, as nroff formats a manual or README for a terminal:
#: bold is "P\bP", underline "_\bP" (or "P\b_")
_OVERSTRIKE = re.compile(r"([^\x08\n])\x08([^\x08\n])")
_OVERSTRIKE_BYTES = re.compile(rb"[^\x00-\x1f]\x08[^\x00-\x1f]")


def without_overstrike(text: str) -> str:
    """``text`` as a terminal shows it: each overstruck character once ("PPoossttffiixx" is read "Postfix")."""
    if "\b" not in text:
        return text
    previous = None
    while previous != text:  # "P\bP\bP" (struck twice) takes two passes
        previous = text
        text = _OVERSTRIKE.sub(lambda struck: struck.group(1) if struck.group(2) == "_" else struck.group(2), text)
    return text


def decode_text(data: bytes) -> str:
    """Decode bytes of unknown encoding: UTF-8 (with or without BOM), UTF-16 with BOM, else detected. Overstruck
    characters are read once (:func:`without_overstrike`).

    Raises:
        IngestError: the bytes are binary content, not text.
    """
    return without_overstrike(_decoded(data))


#: a character of two to four bytes as UTF-8 writes it, or (its group) a byte over 0x7F that no such sequence
#: holds: one UTF-8 cannot read where it stands
_UTF8_OR_NOT = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}|([\x80-\xff])")
_CP1252_FALLBACK = "citesum-cp1252"
#: the most bytes beyond ASCII in a text too nearly ASCII for its encoding to be detected
_FEW_BYTES_BEYOND_ASCII = 3
_ASCII = bytes(range(0x80))


def _mostly_utf8(data: bytes) -> bool:
    """Whether ``data`` (not all UTF-8) is UTF-8 with some bytes of another encoding: it writes UTF-8 characters
    beyond ASCII, at least a quarter as many as the bytes UTF-8 cannot read. A text in a legacy code page
    seldom holds one (a capital letter with an accent before a symbol: "Â©"), and a text in cp1252 read so
    is read right but for those."""
    written = unreadable = 0
    for match in _UTF8_OR_NOT.finditer(data):
        if match.group(1) is None:
            written += 1
        else:
            unreadable += 1
    return written > 0 and 4 * written >= unreadable


def _in_cp1252(error: UnicodeDecodeError) -> tuple[str, int]:
    return error.object[error.start:error.end].decode("cp1252", errors="replace"), error.end


codecs.register_error(_CP1252_FALLBACK, _in_cp1252)


def _decoded(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if _is_utf16(data[:2]):
        return data.decode("utf-16", errors="replace")
    if looks_binary(data):
        raise IngestError("binary content, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if _mostly_utf8(data):
        # UTF-8 with some bytes of a legacy code page in it (a file edited in two editors, lines pasted from a
        # Latin-1 one): each is read in cp1252, and the UTF-8 stays UTF-8 ("naïve" had become "naĂŻve")
        return data.decode("utf-8", errors=_CP1252_FALLBACK)
    if len(data.translate(None, _ASCII)) <= _FEW_BYTES_BEYOND_ASCII:
        # ASCII but for a stray byte or three (a no-break space, an acute accent used as a quote, "µF"): no
        # statistic can tell their code page, and detection read lp_solve's no-break space as cp775's "Ā" and
        # CVS's "´" as cp932's "ｴ"; they are read in cp1252, the most common legacy encoding (a byte it leaves
        # undefined is replaced: detection read a lone 0x81 as Cyrillic "Б")
        return data.decode("cp1252", errors="replace")
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        # Every byte decodes in cp1252 except five; replacing them keeps the text readable and the run going.
        return data.decode("cp1252", errors="replace")
    best = matches[0]
    # Short Western text is ambiguous between the single-byte code pages (cp1250 turns "è" into "č");
    # among equally plausible decodings, prefer the most common legacy encoding, cp1252.
    for match in matches:
        if match.encoding in _WESTERN and match.chaos <= best.chaos and match.coherence >= best.coherence:
            return str(match)
    return str(best)
