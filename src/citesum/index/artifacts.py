"""The files of one generation (``gen-<N>/``: the row order, the segments' vectors, term counts and graphs, the
BM25 statistics of the whole generation), written atomically, with the size, a hash and the identity (inode,
modification time) of each recorded in the manifest so that a damaged file is found and not searched: at a load
when it changed since (:func:`verify`), by ``citesum check`` whatever the damage. A generation links the files of
the segments it shares with the one before (hard links: no copy), and their records come with them.

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
#: relative path of each file -> [size in bytes, digest, inode, modification time in ns] (:func:`record`; the
#: records of indexes written before the last two have only the first two)
Checksums = dict[str, list]
#: files from this size on that were found sound are not read again by the same process while they stay the
#: same file (device, inode, size, modification time): a service verifies each new generation when it loads it,
#: and the segments it shares with the one before were verified then (2.2 GB for a million units). Records made
#: since carry the file's inode and time, which spares other processes too (:func:`verify`); a write names a linked
#: file whose older record lacks them when this process found it sound.
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


def record(file: Path, digest: str | None = None) -> list:
    """``file``'s record: its size, its digest (read from it unless given) and which file it is, as it stands
    (inode and modification time)."""
    stat = file.stat()
    return [stat.st_size, file_digest(file) if digest is None else digest, stat.st_ino, stat.st_mtime_ns]


def checksums(folder: Path) -> Checksums:
    return {file.relative_to(folder).as_posix(): record(file) for file in sorted(folder.rglob("*")) if file.is_file()}


def _identity(stat: os.stat_result, digest: str) -> tuple[int, ...]:
    # not the change time: linking a file into the next generation, and removing the previous one's link, change
    # it, and every shared file would be read again at each reload
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, hash(digest)


def _known_sound(stat: os.stat_result, kept: list) -> bool:
    """Whether the file of ``stat`` is the very file its record ``kept`` was made from, unchanged since (same
    inode, size and modification time), or one this process found sound."""
    return (stat.st_size == kept[0] and kept[2:] == [stat.st_ino, stat.st_mtime_ns]) \
        or _identity(stat, kept[1]) in _verified


def verify(folder: Path, recorded: Mapping[str, list], *, thorough: bool = False) -> list[str]:
    """What differs between the files of ``folder`` and their ``recorded`` checksums (nothing when sound).

    A file that is still the file its record was made from (same inode, size and modification time: a hard link
    into a later generation keeps them) is not read again, unless ``thorough`` (``citesum check``): a 1% update of
    a million units out of the page cache spent 4.2 of its 11 s reading the 2.2 GB it builds on and only links.
    Damage written through the file system since (a file overwritten, truncated, replaced) changes them and is
    found. Only ``thorough`` finds damage that leaves them as they were: a disk's (bit rot, writes lost in a
    power cut by a drive's volatile cache), a block-level copy or restore, a file overwritten by a tool that puts
    its time back (``cp -p``, ``rsync -t --inplace``, ``touch -r``) or recreated with its inode number and time,
    and a write within the same tick of the file system's clock as the file's own."""
    problems = []
    for name, kept in sorted(recorded.items()):
        size, digest = kept[0], kept[1]
        file = folder / name
        if not file.is_file():
            problems.append(f"{file} is missing")
            continue
        stat = file.stat()
        if stat.st_size != size:
            problems.append(f"{file} has {stat.st_size:,} bytes, not the {size:,} written")
            continue
        if not thorough and _known_sound(stat, kept):
            continue
        if file_digest(file, like=digest) != digest:
            problems.append(f"{file} does not hold what was written (its checksum differs)")
        elif size >= _REMEMBERED_FROM_BYTES:
            with _verified_lock:
                _verified.add(_identity(stat, digest))
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
                kept = linked[relative][1]
                if relative in copied:  # a file its record does not name: read at its next load
                    _fsync(file)
                    written[relative] = list(kept[:2])
                else:  # the very file its record names: named as it stands when it is known sound
                    written[relative] = record(file, kept[1]) if _known_sound(file.stat(), kept) else list(kept)
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
