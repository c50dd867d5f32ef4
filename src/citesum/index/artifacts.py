"""The files of one generation (``gen-<N>/``: the row order, the segments' vectors, term counts and graphs, the
BM25 statistics of the whole generation), written atomically, with the size and a hash of each recorded in the
manifest so that a damaged file is found, never searched. A generation links the files of the segments it
shares with the one before (hard links: no copy), and their recorded checksums come with them.

A vector file overwritten with random bytes of the same size used to give cosine scores of 4.38 without a
word; with the checksums, reading it is refused and the state is rebuilt from the database instead.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import zlib
from pathlib import Path
from typing import Callable, Mapping

ROWS = "rows.npy"
#: relative path of each file -> [size in bytes, digest]
Checksums = dict[str, list]
#: files from this size on that were found sound are not read again by the same process while they stay the
#: same file (device, inode, size, modification time): a service verifies each new generation when it loads it,
#: and the segments it shares with the one before were verified then (2.2 GB for a million units)
_REMEMBERED_FROM_BYTES = 64 << 20
_verified: set[tuple[int, ...]] = set()
_verified_lock = threading.Lock()


def file_digest(path: Path, *, like: str = "crc32:") -> str:
    """``crc32:<hex>``, or a BLAKE2b-128 hex digest when ``like`` is one (what indexes written before the
    change to CRC-32 recorded). Every worker of a service verifies each new generation when it loads it; CRC-32
    reads 2.2 GB/s here where BLAKE2b reads 1, and a reload waited 25 ms for BLAKE2b on the meeting index. The
    checksums find damage (a disk, a copy, a file overwritten by mistake), which CRC-32 finds as well."""
    if like.startswith("crc32:"):
        crc = 0
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                crc = zlib.crc32(block, crc)
        return f"crc32:{crc:08x}"
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksums(folder: Path) -> Checksums:
    return {file.relative_to(folder).as_posix(): [file.stat().st_size, file_digest(file)]
            for file in sorted(folder.rglob("*")) if file.is_file()}


def verify(folder: Path, recorded: Mapping[str, list]) -> list[str]:
    """What differs between the files of ``folder`` and their ``recorded`` checksums (nothing when sound)."""
    problems = []
    for name, (size, digest) in sorted(recorded.items()):
        file = folder / name
        if not file.is_file():
            problems.append(f"{file} is missing")
            continue
        stat = file.stat()
        if stat.st_size != size:
            problems.append(f"{file} has {stat.st_size:,} bytes, not the {size:,} written")
            continue
        # not the change time: linking a file into the next generation, and removing the previous one's link,
        # change it, and every shared file would be read again at each reload
        identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, hash(digest))
        if identity in _verified:
            continue
        if file_digest(file, like=digest) != digest:
            problems.append(f"{file} does not hold what was written (its checksum differs)")
        elif size >= _REMEMBERED_FROM_BYTES:
            with _verified_lock:
                _verified.add(identity)
    present = [file.relative_to(folder).as_posix() for file in folder.rglob("*") if file.is_file()]
    problems += [f"{folder / name} was not written by citesum" for name in sorted(set(present) - set(recorded))]
    return problems


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
                written[relative] = list(linked[relative][1])
                if relative in copied:
                    _fsync(file)
            else:
                _fsync(file)
                written[relative] = [file.stat().st_size, file_digest(file)]
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
