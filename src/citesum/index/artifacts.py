"""The files of one generation (``gen-<N>/``: the row order, the segments' vectors, term counts and graphs, the
BM25 statistics of the whole generation), written atomically, with the size, a hash, the CRC-32 of each block and
the identity (inode, modification time) of each recorded in the manifest so that a damaged file is found and not
searched. A generation links the files of the segments it shares with the one before (hard links: no copy), and
their records come with them.

A vector file overwritten with random bytes of the same size used to give impossible cosine scores (above 1)
without a word; with the checksums, reading it is refused and the state is rebuilt from the database instead.

Damage can keep a file's identity: a disk's (bit rot, writes lost in a power cut by a drive's volatile cache), a
block-level copy or restore, a tool that puts the time back (``cp -p``, ``rsync -t --inplace``, ``touch -r``). 100
bytes flipped that way in a segment's vectors gave dense and hybrid search another top 5 without a word, because
a load trusted a file whose identity matched its record. So every file a search reads is read again before it
is searched (:func:`verify_before_reading`, its blocks on several threads): by each new process at its load, by a
process that keeps a generation loaded every :data:`REVERIFY_S` (:func:`watch`: the files are memory-mapped, and
a page the kernel let go of is read from the disk again, rot included), and by a write for what it carries into
the next generation. Only the files a write links and does not read are trusted by their identity (:func:`verify`):
the next load reads them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import time
import weakref
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

log = logging.getLogger(__name__)

ROWS = "rows.npy"
#: relative path of each file -> [size in bytes, digest, inode, modification time in ns, blocks] (:func:`record`;
#: the records of indexes written before blocks have only the first four, and before that only the first two)
Checksums = dict[str, list]
#: the blocks a record checks a file by: {"bytes": the size of each (the last may be shorter), "crc32": the CRC-32
#: of each}. A load reads a large file's blocks on several threads, and names the bytes of a damaged one.
BLOCK_BYTES = 16 << 20
#: what a read hands the checksum at a time (a divisor of BLOCK_BYTES)
_CHUNK_BYTES = 1 << 20
#: threads reading the blocks of a load (the background reads take one)
_READ_THREADS = max(1, min(4, os.cpu_count() or 1))
#: how long a file this process read and found sound is not read again by a load (a service's next generation
#: shares most of its files with the one before), and how often the files of a loaded generation are read again
#: in the background (:func:`watch`): the longest a page read back from a rotten disk block is searched before
#: the damage is found
REVERIFY_S = 600.0
#: files from this size on that were found sound are trusted by a write (:func:`verify`) in the same process while
#: they stay the same file (device, inode, size, modification time), as the files whose record names them as they
#: stand are; a write names a linked file whose older record lacks its inode and time when this process found it
#: sound.
_REMEMBERED_FROM_BYTES = 64 << 20
_verified: set[tuple[int, ...]] = set()
_verified_lock = threading.Lock()
#: the identity of each file this process read and found sound (:func:`verify_before_reading`) -> when
#: (time.monotonic)
_read_sound: dict[tuple[int, ...], float] = {}


def file_digest(path: Path, *, like: str = "crc32:") -> str:
    """``crc32:<hex>``, or a BLAKE2b-128 hex digest when ``like`` is one (what indexes written before the
    change to CRC-32 recorded). Every worker of a service verifies each new generation when it loads it; CRC-32
    reads faster than BLAKE2b, and a reload on the meeting index had to wait for BLAKE2b's reading. The
    checksums find damage (a disk, a copy, a file overwritten by mistake), which CRC-32 finds as well."""
    if like.startswith("crc32:"):
        return f"crc32:{_read_crc(path, 0, path.stat().st_size):08x}"
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_crc(path: Path, start: int, length: int, crc: int = 0) -> int:
    """The CRC-32 of ``length`` bytes of ``path`` from ``start`` on (continuing ``crc``)."""
    buffer = memoryview(bytearray(_CHUNK_BYTES))
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        while length > 0:
            read = handle.readinto(buffer[: min(_CHUNK_BYTES, length)])
            if not read:
                break
            crc = zlib.crc32(buffer[:read], crc)
            length -= read
    return crc


def _digest_and_blocks(path: Path) -> tuple[str, dict]:
    """``path``'s digest (``crc32:<hex>``, :func:`file_digest`) and its blocks' (:data:`BLOCK_BYTES`), in one
    read."""
    whole, blocks = 0, []
    buffer = memoryview(bytearray(_CHUNK_BYTES))
    with open(path, "rb", buffering=0) as handle:
        while True:
            block, left = 0, BLOCK_BYTES
            while left and (read := handle.readinto(buffer[: min(_CHUNK_BYTES, left)])):
                whole = zlib.crc32(buffer[:read], whole)
                block = zlib.crc32(buffer[:read], block)
                left -= read
            if left == BLOCK_BYTES and blocks:  # the end, on a block's boundary
                break
            blocks.append(block)
            if left:
                break
    return f"crc32:{whole:08x}", {"bytes": BLOCK_BYTES, "crc32": blocks}


def record(file: Path, digest: str | None = None, blocks: dict | None = None) -> list:
    """``file``'s record: its size, its digest and its blocks' checksums (read from it unless the digest is
    given), which file it is, as it stands (inode and modification time)."""
    stat = file.stat()
    if digest is None:
        digest, blocks = _digest_and_blocks(file)
    kept = [stat.st_size, digest, stat.st_ino, stat.st_mtime_ns]
    return kept if blocks is None else [*kept, blocks]


def _blocks(kept: list) -> dict | None:
    """The blocks' checksums of a record (none in a record written before them)."""
    return kept[4] if len(kept) > 4 else None


def checksums(folder: Path) -> Checksums:
    return {file.relative_to(folder).as_posix(): record(file) for file in sorted(folder.rglob("*")) if file.is_file()}


def _identity(stat: os.stat_result, digest: str) -> tuple[int, ...]:
    # not the change time: linking a file into the next generation, and removing the previous one's link, change
    # it, and every shared file would be read again at each reload
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, hash(digest)


def _known_sound(stat: os.stat_result, kept: list) -> bool:
    """Whether the file of ``stat`` is the very file its record ``kept`` was made from, unchanged since (same
    inode, size and modification time), or one this process found sound."""
    return (stat.st_size == kept[0] and kept[2:4] == [stat.st_ino, stat.st_mtime_ns]) \
        or _identity(stat, kept[1]) in _verified


def _read_sound_lately(stat: os.stat_result, kept: list) -> bool:
    """Whether this process read the file of ``stat`` and found it sound less than :data:`REVERIFY_S` ago."""
    read_at = _read_sound.get(_identity(stat, kept[1]))
    return read_at is not None and time.monotonic() - read_at < REVERIFY_S


def verify(folder: Path, recorded: Mapping[str, list], *, thorough: bool = False,
           read_again: Callable[[str], bool] = lambda name: False) -> list[str]:
    """What differs between the files of ``folder`` and their ``recorded`` checksums (nothing when sound), each
    file named by its path in the index folder (``gen-<N>/...``).

    The files ``read_again`` picks by their relative path (those about to be read) are read as
    :func:`verify_before_reading` reads them. Any other file that is still the file its record was made from (same
    inode, size and modification time: a hard link into a later generation keeps them) is not read again, unless
    ``thorough`` (``citesum check``): what a write links without reading it (on a 1% update of a million units out
    of the page cache, reading what it builds on and only links was a large share of its time). Damage written
    through the file system since (a file overwritten, truncated, replaced) changes them and is found; damage that
    keeps them (the module docstring) is found when the file is read: by the next load, by ``thorough``."""
    picked = {name: kept for name, kept in recorded.items() if not thorough and read_again(name)}
    trusted = {name: kept for name, kept in recorded.items() if name not in picked}
    problems = _differences(folder, trusted, lambda stat, kept: thorough or not _known_sound(stat, kept),
                            whole=True)
    problems += verify_before_reading(folder, picked)
    present = [file.relative_to(folder).as_posix() for file in folder.rglob("*") if file.is_file()]
    problems += [f"{_shown(folder, name)} was not written by citesum" for name in sorted(set(present) - set(recorded))]
    return problems


def verify_before_reading(folder: Path, recorded: Mapping[str, list], *, threads: int = _READ_THREADS) -> list[str]:
    """What differs between the files ``recorded`` names in ``folder`` (those about to be read: a search's, what
    a write carries into the next generation) and their checksums, each file read again whatever its identity
    unless this process read it and found it sound less than :data:`REVERIFY_S` ago: its blocks on ``threads``
    threads (a record without blocks: the file whole). A file found sound is remembered as such, a damaged one
    forgotten."""
    return _differences(folder, recorded, lambda stat, kept: not _read_sound_lately(stat, kept), threads=threads)


def _shown(folder: Path, name: str) -> str:
    """A file of a generation's ``folder`` as a message names it: by its path in the index folder."""
    return f"{folder.name}/{name}"


def _differences(folder: Path, recorded: Mapping[str, list], read: Callable[[os.stat_result, list], bool], *,
                 whole: bool = False, threads: int = 1) -> list[str]:
    """What differs between the files ``recorded`` names in ``folder`` and their records: a file missing or of
    another size, or, read (those ``read`` picks), other bytes; by their digest (``whole``) or their blocks."""
    problems, to_read = [], []
    for name, kept in sorted(recorded.items()):
        file = folder / name
        if not file.is_file():
            problems.append(f"{_shown(folder, name)} is missing")
            continue
        stat = file.stat()
        if stat.st_size != kept[0]:
            problems.append(f"{_shown(folder, name)} has {stat.st_size:,} bytes, not the {kept[0]:,} written")
        elif read(stat, kept):
            to_read.append((name, stat, kept))
    found = _read_and_compare(folder, to_read, whole=whole, threads=threads)
    for name, stat, kept in to_read:
        _remember(stat, kept, sound=name not in found)
    return problems + [found[name] for name, _, _ in to_read if name in found]


@dataclass(frozen=True)
class _Check:
    """One read of a file against its record: a block of it against the block's CRC-32, or (``block`` -1) the
    file whole against its digest."""

    name: str
    path: Path
    block: int
    expected: str | int
    block_bytes: int = 0

    def outcome(self) -> str | None:
        """None when the bytes read are those recorded; else "checksum", or why they could not be read."""
        try:
            if self.block < 0:
                found: str | int = file_digest(self.path, like=str(self.expected))
            else:
                found = _read_crc(self.path, self.block * self.block_bytes, self.block_bytes)
        except OSError as exc:  # a disk's damage may be a read error rather than other bytes
            return f"unreadable: {exc.strerror or exc}"
        return None if found == self.expected else "checksum"


def _read_and_compare(folder: Path, files: list[tuple[str, os.stat_result, list]], *, whole: bool,
                      threads: int) -> dict[str, str]:
    """The problem of each of ``files`` (relative path, stat, record) whose bytes differ from their record, or
    that cannot be read: read a block at a time on ``threads`` threads (a file whole when ``whole`` or when its
    record has no blocks)."""
    checks = []
    for name, _, kept in files:
        blocks = _blocks(kept)
        if whole or blocks is None:
            checks.append(_Check(name, folder / name, -1, kept[1]))
        else:
            checks += [_Check(name, folder / name, number, crc, blocks["bytes"])
                       for number, crc in enumerate(blocks["crc32"])]
    if threads > 1 and len(checks) > 1:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="citesum-verify") as pool:
            outcomes = list(pool.map(_Check.outcome, checks))
    else:
        outcomes = [check.outcome() for check in checks]
    failed: dict[str, list[tuple[int, str]]] = {}
    for check, outcome in zip(checks, outcomes):
        if outcome is not None:
            failed.setdefault(check.name, []).append((check.block, outcome))
    records = {name: kept for name, _, kept in files}
    return {name: _damage(folder, name, records[name], found) for name, found in failed.items()}


def _damage(folder: Path, name: str, kept: list, found: list[tuple[int, str]]) -> str:
    """The problem of a file whose blocks ``found`` (number, "checksum" or why unreadable; -1: the file whole)
    differ from their record ``kept``."""
    unreadable = [why for _, why in found if why != "checksum"]
    if unreadable:
        return f"{_shown(folder, name)} could not be read ({unreadable[0]})"
    number = found[0][0]
    if number < 0:
        return f"{_shown(folder, name)} does not hold what was written (its checksum differs)"
    size = kept[4]["bytes"]
    first = f"bytes {number * size:,} to {min((number + 1) * size, kept[0]) - 1:,}"
    more = f" and {len(found) - 1} other block(s) of {size >> 20} MiB" if len(found) > 1 else ""
    return f"{_shown(folder, name)} does not hold what was written (its checksum differs in {first}{more})"


def _remember(stat: os.stat_result, kept: list, *, sound: bool) -> None:
    """Remember that this process read the file of ``stat`` and found it sound (now), or forget it."""
    identity = _identity(stat, kept[1])
    with _verified_lock:
        if sound:
            _read_sound[identity] = time.monotonic()
            if stat.st_size >= _REMEMBERED_FROM_BYTES:
                _verified.add(identity)
        else:
            _read_sound.pop(identity, None)
            _verified.discard(identity)


class Watched:
    """The files of a generation a process keeps loaded, read again in the background (:func:`watch`)."""

    def __init__(self, folder: Path, recorded: Mapping[str, list]) -> None:
        self.folder = folder
        self.recorded = dict(recorded)
        #: what the last reading found (nothing: sound)
        self.problems: list[str] = []

    @property
    def damaged(self) -> bool:
        return bool(self.problems)


#: the generations watched, for as long as their store holds them
_watched: "weakref.WeakSet[Watched]" = weakref.WeakSet()
_watcher: threading.Thread | None = None
#: set when a generation is watched: the watcher then looks at what is due (and at REVERIFY_S) at once
_wake = threading.Event()


def watch(folder: Path, recorded: Mapping[str, list]) -> Watched:
    """Have the files ``recorded`` names in ``folder`` (a generation this process loaded and found sound) read
    again in the background on one thread, each once it was last read :data:`REVERIFY_S` ago, for as long as the
    returned handle is held; the handle says when one was found damaged (and it is logged). A generation whose
    folder is gone (a writer removed it once a later one committed) is not read."""
    global _watcher
    watched = Watched(folder, recorded)
    with _verified_lock:
        _watched.add(watched)
        if _watcher is None or not _watcher.is_alive():  # none yet, or a process forked from one that had it
            _watcher = threading.Thread(target=_watch_forever, name="citesum-reverify", daemon=True)
            _watcher.start()
    _wake.set()
    return watched


def _watch_forever() -> None:
    while True:
        # files come due at different times (each when it was last read): looked at four times a period, a file is
        # read again at most a quarter of a period late
        _wake.wait(REVERIFY_S / 4)
        _wake.clear()
        try:
            reverify_due()
        except Exception:  # a failure of one round must not end the watch
            log.exception("reading the files of a loaded generation again failed")


def reverify_due() -> None:
    """Read again the files of the watched generations last read :data:`REVERIFY_S` ago or more (one thread)."""
    with _verified_lock:
        watching = list(_watched)
    for watched in watching:
        if watched.damaged or not watched.folder.is_dir():
            continue
        problems = verify_before_reading(watched.folder, watched.recorded, threads=1)
        if problems and watched.folder.is_dir():  # not a folder being removed as it was read
            watched.problems = problems
            log.error("index at %s: %s (found when the files of the loaded generation were read again); searches "
                      "read the database instead from the next one on (citesum check --repair rewrites the files)",
                      watched.folder.parent, "; ".join(problems))
    now = time.monotonic()
    with _verified_lock:
        for identity in [i for i, read_at in _read_sound.items() if now - read_at >= 2 * REVERIFY_S]:
            del _read_sound[identity]


def write(final: Path, write_new: Callable[[Path], None], linked: Mapping[str, tuple[Path, list]]) -> Checksums:
    """Write a generation's files into ``final`` atomically (a ``.tmp`` folder, fsynced, then renamed) and return
    their checksums: ``write_new(folder)`` writes the files this write makes, ``linked`` (a relative path -> the
    same file of an earlier generation and its recorded checksum) are hard-linked, or copied where the file
    system has no hard links. A failure leaves no folder behind; the earlier generation's files are never
    opened for writing."""
    staging = final.with_name(final.name + ".tmp")
    for stale in (final, staging):  # leftovers of a writer killed before its commit
        shutil.rmtree(stale, ignore_errors=True)
    try:
        staging.mkdir()
        copied = set()
        for relative, (source, _) in linked.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copyfile(source, target)
                copied.add(relative)
        write_new(staging)
        written: Checksums = {}
        for file in sorted(staging.rglob("*")):
            relative = file.relative_to(staging).as_posix()
            if file.is_dir():
                fsync_dir(file)
            elif relative in linked:
                kept = linked[relative][1]
                if relative in copied:  # a file its record does not name: read at its next load
                    _fsync(file)
                    written[relative] = list(kept[:2])
                else:  # the very file its record names: named as it stands when it is known sound
                    written[relative] = (record(file, kept[1], _blocks(kept)) if _known_sound(file.stat(), kept)
                                         else list(kept))
            else:
                _fsync(file)
                written[relative] = record(file)
        fsync_dir(staging)
        os.rename(staging, final)
        fsync_dir(final.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return written


def _fsync(file: Path) -> None:
    with open(file, "rb") as handle:
        os.fsync(handle.fileno())


def fsync_tree(folder: Path) -> None:
    """fsync every file and folder under ``folder``, and ``folder`` itself: files written to be linked into a
    generation later (artifacts.write fsyncs only the files it writes or copies)."""
    for entry in sorted(folder.rglob("*")):
        if entry.is_file():
            _fsync(entry)
        else:
            fsync_dir(entry)
    fsync_dir(folder)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_arrays(final: Path, **arrays: object) -> Path:
    """``np.savez`` of ``arrays`` to ``final`` through a temporary file, fsynced, then renamed over the old one:
    an interrupted write leaves the previous file intact (what is stored beside an index: graph, tree, memory)."""
    import numpy as np

    staging = final.with_name(final.name + ".tmp")
    with open(staging, "wb") as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(staging, final)
    fsync_dir(final.parent)  # the rename itself survives a power loss
    return final
