"""``citesum check``: what is wrong with an index, and the repair of what can be repaired.

Checked: SQLite's integrity check of the database; the current generation's search parts (the local store's
files against the checksums in the manifest and their row count against the database; a Milvus store's
collection against the database); leftovers (generations that are not current,
folders of writers that were killed); the database's own consistency (passages without a document, documents
without passages). Repaired: the generation files, rewritten from the database (the source of truth) as a new
generation, and the leftovers removed. A damaged database is not repaired: rebuild the index from its sources.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from citesum.index.store import DB_NAME, LOCK_NAME, TASKS_DIR, Index, read_only_connection

#: what an index folder may hold besides its generations (the database with its WAL files, the write lock,
#: the LightPAL graph, the service's uploads, the results of an interrupted parallel job)
_KNOWN = {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", LOCK_NAME, "lightpal-graph.npz", "uploads", TASKS_DIR}


@dataclass
class CheckReport:
    path: str
    #: what makes the index give wrong or no answers
    problems: list[str] = field(default_factory=list)
    #: what is worth knowing but harmless (leftovers, files that are not citesum's)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    #: whether --repair can fix every problem (it cannot fix a damaged database)
    repairable: bool = True

    @property
    def ok(self) -> bool:
        return not self.problems


def check_index(path: str | Path) -> CheckReport:
    index = Index.open(path)  # refuses a missing or unreadable database with the reason
    report = CheckReport(str(index.path))
    damage = index.integrity_problems(limit=20, full=True)
    if damage:
        report.problems += [f"database: {problem}" for problem in damage]
        report.repairable = False
        return report  # what follows reads the database, which cannot be trusted now
    with read_only_connection(index.path) as conn:
        manifest = dict(conn.execute("SELECT key, value FROM manifest").fetchall())
        generation = int(manifest["generation"])
        documents = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        passages = conn.execute("SELECT COUNT(*) FROM passages").fetchone()[0]
        orphans = conn.execute("SELECT COUNT(*) FROM passages WHERE document_id NOT IN "
                               "(SELECT id FROM documents)").fetchone()[0]
        empty = conn.execute("SELECT COUNT(*) FROM documents WHERE id NOT IN "
                             "(SELECT document_id FROM passages)").fetchone()[0]
    report.counts = {"generation": generation, "documents": documents, "passages": passages}
    if orphans:
        report.problems.append(f"database: {orphans} passage(s) belong to no document")
    if empty:
        report.notes.append(f"database: {empty} document(s) have no passage (nothing of them can be found)")
    report.problems += index.store.problems(manifest, passages)
    if not report.problems:
        report.notes += index.store.notes(manifest)
    folder = index.path / f"gen-{generation}"
    for entry in sorted(index.path.iterdir()):
        if entry.name.startswith("gen-") and entry != folder:
            what = ("segments a killed writer was making" if entry.name.endswith(".segments")
                    else "not the current generation")
            report.notes.append(f"{entry} is left over ({what}); --repair removes it")
        elif entry.name == TASKS_DIR:
            report.notes.append(f"{entry} holds the results of an interrupted parallel job (the same job run again "
                                "takes them; the next write of the index removes them); --repair removes it")
        elif not index.store.owns(entry.name) and entry.name not in _KNOWN:
            report.notes.append(f"{entry} is not a file of citesum's (left as it is)")
    return report


def repair_index(path: str | Path) -> CheckReport:
    """Rewrite the current generation's files from the database, record their checksums, remove leftovers;
    then check again. Refuses a damaged database (no repair can trust it)."""
    before = check_index(path)
    if not before.repairable:
        return before
    index = Index.open(path)
    index.rewrite_generation()
    shutil.rmtree(index.path / TASKS_DIR, ignore_errors=True)
    for entry in index.path.glob("gen-*"):
        if entry.name != f"gen-{index.generation}":
            shutil.rmtree(entry, ignore_errors=True)
    return check_index(path)
