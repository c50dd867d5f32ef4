"""The Milvus search store (extra ``milvus``): a collection holding each passage's vector and analysed text, searched
by Milvus's own BM25 function (sparse), its dense index (HNSW, IVF_FLAT or FLAT) and its RRF ranker (one round
trip for a hybrid query). ``milvus:URI`` names a milvus-lite file (runs in-process, offline) or a server
(``http://host:19530``, a standalone or a cluster of Milvus 2.5 or later, the first with the BM25 function; a
token, when the server wants one, comes from the environment variable ``CITESUM_MILVUS_TOKEN``, never from the
manifest).

The documents and passages, their positions and embeddings stay in the index folder's database, so packing,
citations and evidence work unchanged, and the collection can always be written again from it (``citesum check
--repair``). A row's primary key is its passage's rowid, which only grows and names one passage's content.

Generations: a write upserts its new units *before* its transaction commits (a reader drops every unit that is
not among its pinned generation's rowids, so it never sees them early), and deletes the units it removed only
*after* the commit, which it records in the manifest first: a writer killed before the commit leaves rows above
the last committed rowid, which the next writer deletes before it writes; one killed after the commit leaves the
recorded deletions, which the next writer carries out. A reader of an older generation may find fewer of the
units that a newer one removed (they are gone from the collection), never a unit its generation does not have.

Loading: Milvus searches only a collection that is loaded, and milvus-lite keeps that state in the memory of the
process that opened the file (a collection with indexes opens released, as a Milvus server's does until someone
loads it): the process that built an index has its collection loaded, every other one finds it released. So a
process loads a collection before its first search of it, and loads it again when a search finds it released
meanwhile (an operator's ``release`` on a server). Writes need no load. ``citesum check`` and the service's
``/health`` ask the collection a real search (:meth:`MilvusStore.probe`), not only whether it exists.

Messages name a milvus-lite file relative to the index folder, never by its absolute path: the service returns
them to its clients.

Text is analysed by citesum (:func:`citesum.index.lexical.tokenize`: lower case, English stop words removed,
Snowball-stemmed, as for the local BM25) and stored as its tokens joined by spaces, which Milvus's standard
tokenizer splits again: the same terms on both sides whatever analysers the server has (milvus-lite has no
English stemmer), and scores close to the local store's (BM25 with the same k1 and b; the statistics are
Milvus's own).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from citesum.errors import ConfigError, IndexMismatchError, IndexStoreError, MissingExtraError
from citesum.index.ann import CANDIDATES
from citesum.index.cosine import cosine_scores
from citesum.index.database import (DB_NAME, connect_read_only, manifest_value, parameter_batches, read_vectors,
                                    stored_dim)
from citesum.index.lexical import LexicalIndex, tokenize
from citesum.index.search_store import ProgressFn, SearchParts, SearchStore, positions_among
from citesum.types import Passage

log = logging.getLogger(__name__)

#: the dense index types a collection may be built with, and their build / search parameters
DENSE_INDEXES: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "HNSW": ({"M": 16, "efConstruction": 128}, {"ef": CANDIDATES}),
    "IVF_FLAT": ({"nlist": 1024}, {"nprobe": 64}),
    "FLAT": ({}, {}),
}
DEFAULT_DENSE_INDEX = "HNSW"
#: units a BM25 or hybrid search returns (the depth a fusion ranks, as for the local store)
SEARCH_DEPTH = 1000
#: rows per upsert: one message well under the server's 64 MB default
UPSERT_BATCH = 1000
#: the longest analysed text a row holds (Milvus's VARCHAR limit, in bytes)
MAX_TERMS_BYTES = 65_535
CONNECT_TIMEOUT_S = 10.0
_PENDING = "milvus_pending_delete"
#: Milvus's code for a search of a collection that is not loaded
NOT_LOADED_CODE = 101
#: what a probe's BM25 half asks (any term: the search has to run, not to find anything)
PROBE_TERMS = "citesum"
#: the first Milvus server with the BM25 function (full-text search); hybrid search came before it, in 2.4
MIN_SERVER_VERSION = (2, 5)


def server_version(version: str) -> tuple[int, ...]:
    """``v2.5.4`` (or ``2.5.4-gpu``...) as (2, 5, 4); () when it names no version (read as too old)."""
    numbers = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(n) for n in numbers.group(1).split(".")) if numbers else ()


def _pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError as exc:
        raise MissingExtraError("the Milvus store", "milvus", "pymilvus") from exc
    return pymilvus


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """The ``logger``'s records below CRITICAL dropped inside the block."""
    quieted = logging.getLogger(logger)
    level = quieted.level
    quieted.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        quieted.setLevel(level)


def analysed(texts: list[str]) -> list[str]:
    """What a row's ``terms`` field holds: the text's BM25 terms joined by spaces, the terms past the field's
    size left out (a whole-document unit of a long document)."""
    joined = [" ".join(tokens) for tokens in tokenize(texts)] if texts else []
    return [_clipped(text) for text in joined]


def _clipped(terms: str) -> str:
    encoded = terms.encode()
    if len(encoded) <= MAX_TERMS_BYTES:
        return terms
    return encoded[: MAX_TERMS_BYTES + 1].decode(errors="ignore").rsplit(" ", 1)[0]


class MilvusStore(SearchStore):
    """A generation's searches in a Milvus collection (see the module docstring)."""

    def __init__(self, where: str, index_path: Path, manifest: dict[str, str]) -> None:
        self.spec = f"milvus:{where}" if where else "milvus"
        #: a milvus-lite file (``milvus`` alone: one inside the index folder), or a server's address
        self.uri = where or str(index_path / "milvus.db")
        self.index_path = index_path
        #: how messages name the store (see the module docstring)
        self.label = _label(self.uri, index_path)
        self.collection = manifest.get("milvus_collection", "")
        self.dense_index = manifest.get("milvus_dense_index", DEFAULT_DENSE_INDEX)
        self._client: Any = None
        self._client_lock = threading.Lock()
        #: the collections this process's client has loaded (two threads may both load one: Milvus loads it once)
        self._loaded: set[str] = set()
        #: the first rowid the write under way added (what a failed write takes out again)
        self._first_new_row: int | None = None
        #: the collection a repair under way replaces
        self._replaced: str | None = None

    # ---- the connection ------------------------------------------------------------------------------
    def new_index_manifest(self, created: str, options: dict[str, str]) -> dict[str, str]:
        """The collection's name (one per index: a server holds many) and its dense index type."""
        dense_index = options.get("dense_index", DEFAULT_DENSE_INDEX).upper()
        if dense_index not in DENSE_INDEXES:
            raise ConfigError(f"unknown Milvus dense index '{dense_index}'; choose one of: {', '.join(DENSE_INDEXES)}")
        unknown = set(options) - {"dense_index"}
        if unknown:
            raise ConfigError(f"unknown Milvus store option(s): {', '.join(sorted(unknown))}")
        digest = hashlib.sha1(f"{self.index_path.resolve()}|{created}".encode()).hexdigest()[:16]
        return {"milvus_collection": f"citesum_{digest}", "milvus_dense_index": dense_index}

    def verify(self) -> None:
        self.client()

    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                pymilvus = _pymilvus()
                token = os.environ.get("CITESUM_MILVUS_TOKEN", "")
                try:
                    # milvus-lite logs the traceback of a file locked by another process before it raises
                    with _quiet("milvus_lite"):
                        self._client = pymilvus.MilvusClient(self.uri, token=token, timeout=CONNECT_TIMEOUT_S)
                except pymilvus.MilvusException as exc:
                    if self.is_lite:
                        raise IndexStoreError(
                            f"cannot open the milvus-lite file {self.label} ({self._said(exc)}): milvus-lite serves "
                            "one process at a time, is another citesum (a service, a search) using this index? To "
                            "share an index between processes, use a Milvus server (--store milvus:http://HOST:19530)"
                        ) from exc
                    raise IndexStoreError(f"cannot reach Milvus at {self.uri} ({exc.message}); is the server "
                                          "running, and the address right?") from exc
                self._loaded.clear()  # a new connection has loaded nothing yet
                if not self.is_lite:
                    self._refuse_old_server(self._client)
            return self._client

    def _refuse_old_server(self, client: Any) -> None:
        """A server older than :data:`MIN_SERVER_VERSION` has no BM25 function: said now, before any write.
        (Every server that has it also has hybrid search, so a hybrid query is always one round trip and
        citesum never has to fuse the two searches itself.)"""
        version = str(client.get_server_version())
        if server_version(version) < MIN_SERVER_VERSION:
            self._client = None
            raise IndexStoreError(
                f"Milvus at {self.uri} is version {version}; citesum's Milvus store needs "
                f"{'.'.join(map(str, MIN_SERVER_VERSION))} or later (full-text search with the BM25 function)")

    @property
    def is_lite(self) -> bool:
        """Whether the store is a milvus-lite file (run in this process), not a server."""
        return "://" not in self.uri

    @property
    def one_process_at_a_time(self) -> bool:
        return self.is_lite

    def owns(self, name: str) -> bool:
        return self.spec == "milvus" and name == "milvus.db"

    def _call(self, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """``client.method(*args, **kwargs)``, its failures as the user should read them."""
        pymilvus = _pymilvus()
        try:
            return getattr(self.client(), method)(*args, **kwargs)
        except pymilvus.MilvusException as exc:
            raise self._failure(what, self.collection, exc) from exc

    def _failure(self, what: str, collection: str, exc: Any) -> IndexStoreError:
        return IndexStoreError(f"Milvus at {self.label} failed to {what} (collection {collection}): {self._said(exc)}")

    def _said(self, exc: Any) -> str:
        """A Milvus exception's message, a milvus-lite file named by :attr:`label` in it."""
        message = str(exc.message)
        if self.is_lite:
            for path in {str(Path(self.uri).resolve()), self.uri}:
                message = message.replace(path, self.label)
        return message

    def _read(self, what: str, method: str, collection: str, *args: Any, **kwargs: Any) -> Any:
        """``client.method(collection, *args, **kwargs)`` for a call that needs the collection loaded (a search, a
        query): loaded first when this process has not loaded it, and loaded again when the call finds it
        released meanwhile (see the module docstring)."""
        pymilvus = _pymilvus()

        def loaded_call() -> Any:
            self._ensure_loaded(collection)
            return getattr(self.client(), method)(collection, *args, **kwargs)

        try:
            try:
                return loaded_call()
            except pymilvus.MilvusException as exc:
                if not _not_loaded(exc):
                    raise
                self._loaded.discard(collection)  # released since this process loaded it: load it again, once
                return loaded_call()
        except pymilvus.MilvusException as exc:
            raise self._failure(what, collection, exc) from exc

    def _ensure_loaded(self, collection: str) -> None:
        if collection in self._loaded:
            return
        pymilvus = _pymilvus()
        try:
            self.client().load_collection(collection)
        except pymilvus.MilvusException as exc:
            raise self._failure("load the collection for searching", collection, exc) from exc
        self._loaded.add(collection)

    # ---- the collection ------------------------------------------------------------------------------
    def _expected_fields(self, dim: int) -> dict[str, str]:
        return {"id": "INT64", "terms": "VARCHAR", "sparse": "SPARSE_FLOAT_VECTOR", "dense": f"FLOAT_VECTOR({dim})"}

    def _ensure_collection(self, dim: int) -> None:
        """Create the collection (vectors of ``dim``) unless it exists; refuse one of another schema."""
        if self._call("list collections", "has_collection", self.collection):
            self._check_schema(dim)
            return
        pymilvus = _pymilvus()
        DataType, Function, FunctionType = pymilvus.DataType, pymilvus.Function, pymilvus.FunctionType
        schema = self._call("make a schema", "create_schema", auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("terms", DataType.VARCHAR, max_length=MAX_TERMS_BYTES, enable_analyzer=True)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["terms"],
                                     output_field_names=["sparse"]))
        params = self._call("prepare the indexes", "prepare_index_params")
        # the local store's BM25 parameters (bm25s's defaults), so the two rank alike
        params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                         params={"bm25_k1": LexicalIndex.K1, "bm25_b": LexicalIndex.B})
        build, _ = DENSE_INDEXES[self.dense_index]
        params.add_index("dense", index_type=self.dense_index, metric_type="IP", params=build)
        # milvus-lite answers one call of pymilvus's with "Method not implemented" and logs its traceback at
        # ERROR though the collection is made: that log is not the user's concern
        with _quiet("grpc._server"):
            self._call("create the collection", "create_collection", self.collection, schema=schema,
                       index_params=params, consistency_level="Strong")

    def _check_schema(self, dim: int) -> None:
        description = self._call("describe the collection", "describe_collection", self.collection)
        found = {}
        for field in description.get("fields", []):
            kind = getattr(field.get("type"), "name", str(field.get("type")))
            if kind == "FLOAT_VECTOR":
                kind = f"FLOAT_VECTOR({field.get('params', {}).get('dim')})"
            found[field["name"]] = kind
        expected = self._expected_fields(dim)
        if found != expected:
            raise IndexMismatchError(
                f"the Milvus collection {self.collection} at {self.label} has another schema than this index's: "
                f"{found} where citesum writes {expected}; it is not this index's collection (drop it, or build the "
                "index into a new folder)")

    # ---- reading -------------------------------------------------------------------------------------
    def load(self, conn: sqlite3.Connection, generation: int, row_ids: np.ndarray,
             passages: Sequence[Passage]) -> SearchParts:
        # the collection this generation was written to (a repair writes a new one)
        search = MilvusSearch(self, manifest_value(conn, "milvus_collection") or self.collection, row_ids)
        return SearchParts(StoredVectors(self.index_path, row_ids, stored_dim(conn)), search,
                           search if len(row_ids) else None)

    def problems(self, manifest: dict[str, str], passages: int) -> list[str]:
        self.collection = manifest.get("milvus_collection", self.collection)
        if not passages:
            return []
        try:
            if not self._call("list collections", "has_collection", self.collection):
                return [f"the Milvus collection {self.collection} at {self.label} is missing; --repair writes it "
                        "from the database"]
            dim = int(manifest.get("dim", "0"))
            self._check_schema(dim)
            stats = self._read("count the rows", "query", self.collection, filter="", output_fields=["count(*)"])
            self._probe(self.collection, dim)  # rows it holds, but can it answer?
        except (IndexStoreError, IndexMismatchError) as exc:
            return [str(exc)]
        rows = int(stats[0]["count(*)"]) if stats else 0
        pending = len(json.loads(manifest.get(_PENDING, "[]")))
        if rows - pending != passages:
            return [f"the Milvus collection {self.collection} holds {rows:,} rows ({pending:,} of them to delete) "
                    f"for {passages:,} passages in the database; --repair writes it again"]
        return []

    def probe(self, *, other_processes: bool = False) -> None:
        """One search of the current collection, as a query asks it (BM25 and dense fused by the RRF ranker),
        for one result: raises :class:`IndexStoreError` when the store cannot answer. With ``other_processes``
        (a service whose workers are processes), a milvus-lite file is refused: it serves one process at a time."""
        if other_processes and self.is_lite:
            raise IndexStoreError(
                f"the index's milvus-lite file {self.label} serves one process at a time, and this service's read "
                "workers are processes: serve it with --worker-kind thread, or share the index through a Milvus "
                "server (--store milvus:http://HOST:19530)")
        with closing(_read_only(self.index_path)) as conn:
            collection = manifest_value(conn, "milvus_collection") or self.collection
            dim = stored_dim(conn)
        self._probe(collection, dim)

    def _probe(self, collection: str, dim: int) -> None:
        if not dim:  # nothing was ever embedded: there is no collection to ask
            return
        pymilvus = _pymilvus()
        axis = np.zeros(dim, dtype=np.float32)
        axis[0] = 1.0
        self._read("answer a search", "hybrid_search", collection,
                   _hybrid_requests(self.dense_index, axis, PROBE_TERMS, limit=1, expression=""),
                   ranker=pymilvus.RRFRanker(), limit=1, output_fields=["id"])

    # ---- writing -------------------------------------------------------------------------------------
    def plan(self, conn: sqlite3.Connection, replaced: list[str]) -> "_NoLexical":
        self._first_new_row = None  # a write starts: nothing of its own to take out yet
        self.collection = manifest_value(conn, "milvus_collection") or self.collection
        return _NoLexical()

    def write(self, conn: sqlite3.Connection, generation: int, plan: object, removed_rows: set[int],
              first_new_row: int, added: np.ndarray | None, lexical: object, progress: ProgressFn | None) -> None:
        dim = stored_dim(conn)
        if not dim:  # nothing was ever embedded: no collection yet
            return
        if plan is None:
            # a repair: every row again from the database, into a new collection that becomes current with this
            # generation; readers of the current one go on meanwhile, and it is dropped after the commit
            self._replaced = self.collection
            self.collection = f"{self.collection.split('__')[0]}__{generation}"
            self._call("drop a repair's leftover", "drop_collection", self.collection)
            conn.execute("INSERT OR REPLACE INTO manifest VALUES ('milvus_collection', ?)", (self.collection,))
            conn.execute("DELETE FROM manifest WHERE key = ?", (_PENDING,))
            first_new_row = 1
        self._ensure_collection(dim)
        if plan is not None:
            self._carry_out_pending(conn)
            # rows of a writer killed before its commit (rowids are given again after a rollback)
            self._call("delete rows no generation has", "delete", self.collection, filter=f"id >= {first_new_row}")
        self._first_new_row = first_new_row
        rows = conn.execute("SELECT rowid, text FROM passages WHERE rowid >= ? ORDER BY rowid",
                            (first_new_row,)).fetchall()
        vectors = added if added is not None and plan is not None and len(added) == len(rows) \
            else read_vectors(conn, after_row=first_new_row - 1)
        for start in range(0, len(rows), UPSERT_BATCH):
            batch = rows[start : start + UPSERT_BATCH]
            terms = analysed([text for _, text in batch])
            self._call("write passages", "upsert", self.collection, [
                {"id": int(row_id), "terms": text, "dense": vectors[start + i].tolist()}
                for i, ((row_id, _), text) in enumerate(zip(batch, terms))])
            if progress:
                progress("milvus", min(start + UPSERT_BATCH, len(rows)), len(rows))
        # sealed into segments with their indexes built: milvus-lite otherwise builds the BM25 index of the rows
        # still in memory again at every search, which made each query slow even on the meeting corpus
        self._call("seal the new rows", "flush", self.collection)
        if removed_rows:
            conn.execute("INSERT OR REPLACE INTO manifest VALUES (?, ?)", (_PENDING, json.dumps(sorted(removed_rows))))

    def _carry_out_pending(self, conn: sqlite3.Connection) -> None:
        """Delete the rows the last committed generation removed, when its writer did not live to."""
        pending = manifest_value(conn, _PENDING)
        if pending:
            self._delete(json.loads(pending))
            conn.execute("DELETE FROM manifest WHERE key = ?", (_PENDING,))

    def _delete(self, row_ids: list[int]) -> None:
        for batch, _ in parameter_batches([str(row) for row in row_ids], size=5000):
            self._call("delete removed passages", "delete", self.collection, filter=f"id in [{','.join(batch)}]")

    def committed(self, conn: sqlite3.Connection, generation: int) -> None:
        self._first_new_row = None
        if self._replaced is not None:  # a repair committed: the collection it replaced is no one's now
            replaced, self._replaced = self._replaced, None
            try:
                self._call("drop the collection a repair replaced", "drop_collection", replaced)
            except IndexStoreError as exc:
                log.warning("%s", exc)
        pending = manifest_value(conn, _PENDING)
        if pending:
            try:
                self._delete(json.loads(pending))
            except IndexStoreError as exc:  # the generation is committed: the next writer deletes them
                log.warning("%s; the next write deletes them", exc)
                return
            conn.execute("DELETE FROM manifest WHERE key = ?", (_PENDING,))

    def discard(self, generation: int) -> None:
        if self._replaced is not None:  # a repair failed: its new collection goes, the current one stays
            failed, self.collection, self._replaced = self.collection, self._replaced, None
            self._first_new_row = None
            try:
                self._call("drop a failed repair's collection", "drop_collection", failed)
            except IndexStoreError as exc:
                log.warning("%s", exc)
            return
        if self._first_new_row is not None:
            try:
                self._call("delete rows of a write that failed", "delete", self.collection,
                           filter=f"id >= {self._first_new_row}")
            except IndexStoreError as exc:  # the next writer deletes them first
                log.warning("%s", exc)
            self._first_new_row = None


@dataclass(frozen=True)
class _NoLexical:
    """A Milvus write's plan: the collection indexes text itself."""

    def index_lexically(self, texts: list[str]) -> None:
        return None


class MilvusSearch:
    """BM25, dense and hybrid search of one generation in the store's collection; every score array is aligned
    with the generation's units, and units of other generations are dropped."""

    #: Milvus keeps no term counts citesum can read (RM3 feedback needs them)
    term_statistics = False
    #: a hybrid query is one round trip (Milvus's RRF ranker)
    serves_hybrid = True
    #: the vectors are the server's: a generation's are read from the database one query at a time
    holds_vectors = False

    def __init__(self, store: MilvusStore, collection: str, row_ids: np.ndarray) -> None:
        self.store = store
        self.collection = collection
        self.row_ids = row_ids
        # rows a newer write added (or a killed writer left) are left out by the server, so they never take the
        # places of this generation's units among the results; rows newer generations removed are dropped after
        self.expression = f"id <= {int(row_ids[-1])}" if len(row_ids) else ""

    @property
    def size(self) -> int:
        return len(self.row_ids)

    def _aligned(self, hits: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        """(positions among the generation's units, scores) of the hits of this generation."""
        found = np.array([hit["id"] for hit in hits], dtype=np.int64)
        scores = np.array([hit["distance"] for hit in hits], dtype=np.float32)
        positions, known = positions_among(self.row_ids, found)
        return positions[known], scores[known]

    def _search(self, data: list[Any], field: str, limit: int, params: dict[str, int]) -> list[dict[str, Any]]:
        if not len(self.row_ids):
            return []
        found = self.store._read("search", "search", self.collection, data=data, anns_field=field, limit=limit,
                                 filter=self.expression, search_params={"params": params}, output_fields=["id"])
        return list(found[0]) if found else []

    def scores(self, query: str) -> np.ndarray:
        scores = np.zeros(len(self.row_ids), dtype=np.float32)
        terms = analysed([query])[0]
        if not terms:
            return scores
        positions, found = self._aligned(self._search([terms], "sparse", SEARCH_DEPTH, {}))
        # milvus-lite gives BM25 as a negative distance (best first), a server as a positive score
        scores[positions] = np.abs(found)
        return scores

    def nearest(self, query_vector: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        _, search = DENSE_INDEXES[self.store.dense_index]
        hits = self._search([np.asarray(query_vector, dtype=np.float32).tolist()], "dense", count or CANDIDATES,
                            search)
        return (np.array([hit["id"] for hit in hits], dtype=np.int64),
                np.array([hit["distance"] for hit in hits], dtype=np.float32))

    def hybrid_scores(self, query: str, query_vector: np.ndarray, rrf_k: int) -> np.ndarray:
        """Milvus's reciprocal rank fusion (constant ``rrf_k``) of BM25 and dense, each to the search depth."""
        pymilvus = _pymilvus()
        scores = np.zeros(len(self.row_ids), dtype=np.float32)
        if not len(self.row_ids):
            return scores
        requests = _hybrid_requests(self.store.dense_index, query_vector, analysed([query])[0], SEARCH_DEPTH,
                                    self.expression)
        found = self.store._read("search", "hybrid_search", self.collection, requests,
                                 ranker=pymilvus.RRFRanker(rrf_k), limit=SEARCH_DEPTH, output_fields=["id"])
        positions, fused = self._aligned(list(found[0]) if found else [])
        scores[positions] = fused
        return scores


def _hybrid_requests(dense_index: str, query_vector: np.ndarray, terms: str, limit: int, expression: str) -> list[Any]:
    """A hybrid search's requests: dense for ``query_vector``, and BM25 for the analysed ``terms`` when there are
    any, each for ``limit`` results among the rows ``expression`` keeps."""
    pymilvus = _pymilvus()
    _, search = DENSE_INDEXES[dense_index]
    requests = [pymilvus.AnnSearchRequest(data=[np.asarray(query_vector, dtype=np.float32).tolist()],
                                          anns_field="dense", param={"params": search}, limit=limit, expr=expression)]
    if terms:
        requests.append(pymilvus.AnnSearchRequest(data=[terms], anns_field="sparse", param={"params": {}},
                                                  limit=limit, expr=expression))
    return requests


def _not_loaded(exc: Any) -> bool:
    """Whether a Milvus exception says the collection is not loaded (milvus-lite: 'released')."""
    message = str(exc.message).lower()
    return exc.code == NOT_LOADED_CODE or "not loaded" in message or "released" in message


def _label(uri: str, index_path: Path) -> str:
    """How messages name the store at ``uri``: a milvus-lite file by its path relative to the index folder (by
    its name alone when it is outside it), a server by its address."""
    if "://" in uri:
        return uri
    file, folder = Path(uri).resolve(), index_path.resolve()
    return str(file.relative_to(folder)) if file.is_relative_to(folder) else file.name


def _read_only(index_path: Path) -> sqlite3.Connection:
    """A read-only connection to the index folder's database."""
    return connect_read_only(index_path)


class StoredVectors:
    """A generation's unit vectors, read from the database's stored embeddings when asked (rows by position,
    or all of them): a Milvus index holds no matrix in memory."""

    def __init__(self, index_path: Path, row_ids: np.ndarray, dim: int) -> None:
        self._index_path = index_path
        self._row_ids = row_ids
        self.shape = (len(row_ids), dim)
        self.dtype = np.dtype(np.float32)

    def __len__(self) -> int:
        return len(self._row_ids)

    def _connection(self) -> sqlite3.Connection:
        return _read_only(self._index_path)

    def __getitem__(self, positions: Any) -> np.ndarray:
        wanted = np.atleast_1d(self._row_ids[positions])
        found: dict[int, bytes] = {}
        with closing(self._connection()) as conn:
            for batch, marks in parameter_batches(wanted.tolist()):
                found.update(conn.execute(f"SELECT rowid, embedding FROM passages WHERE rowid IN ({marks})",
                                          batch).fetchall())
        missing = [row for row in wanted.tolist() if row not in found]
        if missing:
            raise IndexStoreError(f"{len(missing)} passage(s) of this generation are gone from {DB_NAME} "
                                  "(a newer generation removed them); ask again")
        matrix = np.array([np.frombuffer(found[row], dtype=np.float32) for row in wanted.tolist()],
                          dtype=np.float32).reshape(len(wanted), self.shape[1])
        return matrix if np.ndim(self._row_ids[positions]) else matrix[0]

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        """Every unit's cosine score for ``query`` (what RAPTOR's collapsed tree ranks), read in one pass."""
        return cosine_scores(np.asarray(self), query)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """Every vector of the generation (what LightPAL's graph build reads), in one pass over the table."""
        with closing(self._connection()) as conn:
            rows = conn.execute("SELECT rowid, embedding FROM passages ORDER BY rowid").fetchall()
        read = np.fromiter((row for row, _ in rows), dtype=np.int64, count=len(rows))
        at = np.searchsorted(read, self._row_ids)
        if len(self._row_ids) and (at.max() >= len(read) or not np.array_equal(read[at], self._row_ids)):
            return self[np.arange(len(self._row_ids))]  # raises, naming what is gone
        matrix = np.array([np.frombuffer(rows[i][1], dtype=np.float32) for i in at.tolist()],
                          dtype=np.float32).reshape(self.shape)
        return matrix if dtype is None else matrix.astype(dtype)
