"""Speed and memory of citesum next to its peers, LlamaIndex 0.14 and Haystack 2.x, on this machine (2 cores).

What is measured, per corpus and per library (each run a fresh subprocess, so its peak RSS is its own):
  * build: seconds from documents (citesum) or passage texts (peers) to an index that answers queries,
    embedding and the loading of model weights and tokenizer files included (imports are done before)
  * peak RSS of the whole run (build, queries, update): ``ru_maxrss`` of the subprocess
  * p50/p95 ms per query, top 20, for BM25, dense and a reciprocal-rank fusion of the two; citesum's default
    ``hybrid`` (BM25 with RM3 + dense with Rocchio feedback) is timed as well but has no peer counterpart
  * update: seconds to add ~1% more documents (held out of the build) until they can be retrieved
Corpora: one SummHay news haystack, the 232 ODSum meeting transcripts (296 queries), and generated corpora of
``--sizes`` documents (citesum.demo.haystack). Runs alternate between the libraries (citesum, LlamaIndex,
Haystack, citesum, ...) three times; the result keeps every run, the medians, and peer / citesum ratios of the
medians (above 1: citesum is faster or smaller).

How the sides are made comparable:
  * one embedder: the wordllama package's bundled 256-d weights (the same pinned version in both virtualenvs),
    loaded and L2-normalised as citesum.embed.wordllama does, in a LlamaIndex BaseEmbedding subclass and in
    Haystack components written here, embedding 256 texts a call like citesum (LlamaIndex's default is 10)
  * the same units: a preparation step chunks the documents with citesum's own chunker (100-token
    sentence-aware passages) and the peers index those passage texts, so chunking is not compared by the main
    build figure. LlamaIndex also gets a second figure, ``build_from_documents_seconds``: its SentenceSplitter
    (chunk_size=100, chunk_overlap=0) on the raw documents, then the same build (its units differ from ours)
  * the same queries, top 20, each query timed alone after a warm-up; a list shorter than 50 queries is
    repeated to 50 timings
  * the peers are installed by this script into their own virtualenv (``--peers-venv``, by default
    ~/.cache/citesum/bench/peers-venv), reused while it works; they are never a citesum dependency

What is not alike (see also ``caveats`` in the result):
  * citesum's build writes a durable index (SQLite + files on disk) and reads it back; the peers' indexes
    live in memory only. ``persist_seconds`` times the peers' own save, outside their build figure.
  * citesum's fusion ranks each member's top 1,000 before RRF; the peers fuse their retrievers' top 20.
  * LlamaIndex's update is ``insert_nodes`` on the vector index plus what it also requires: a new BM25Retriever
    over all nodes (bm25s indexes cannot grow), a new vector retriever (``as_retriever`` captures the node
    ids it may return) and a new fusion retriever. Haystack's InMemoryDocumentStore takes new documents as they
    come. citesum's ``index.add`` writes a new generation to disk.
  * LlamaIndex's BM25 is bm25s with the same analyser as ours (stop words, Snowball stemmer); Haystack's is its
    own pure-Python BM25L with a regex tokenizer and no stemming, so its BM25 rankings differ.

Run: python benchmarks/peers.py [--corpora summhay,meeting,generated] [--sizes 10000,100000]
     [--peers llamaindex,haystack] [--runs 3] [--fresh]  (corpora not run are kept from the last results)
Writes: benchmarks/results/peers.json
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

TOP_K = 20
#: share of each corpus held out of the build and added afterwards (at least one document)
UPDATE_SHARE = 0.01
WARMUP_QUERIES = 5
#: a shorter query list is repeated up to this many timed queries, so that p95 is not just the slowest query
MIN_TIMED_QUERIES = 50
EMBED_BATCH = 256  # what citesum's Embedder.encode_documents uses
WORDLLAMA_DIM = 256
PEERS = ("llamaindex", "haystack")
DEFAULT_PEERS_VENV = Path("~/.cache/citesum/bench/peers-venv").expanduser()
#: citesum's query paths, by the name the result uses; "fusion" is the one the peers also have
CITESUM_PATHS = {"bm25": "bm25", "dense": "dense", "fusion": "hybrid:bm25+dense", "hybrid_default": "hybrid"}
COMPARED_PATHS = ("bm25", "dense", "fusion")
# the generated corpus's queries, as benchmarks/speed.py uses them
GENERATED_QUERIES = [
    "What is happening with the city's water supply?", "How is public transit changing?",
    "What is the state of housing and rents?", "Lakemont reservoir capacity in August",
    "desalination plant cost", "bus drivers strike in May", "zoning reform near tram stops",
    "student bus fares", "median rent two-bedroom", "battery-electric buses Voltaro"] * 5


# --------------------------------------------------------------------------------------------------------------
# The peers' virtualenv
# --------------------------------------------------------------------------------------------------------------

def _pinned_requirements() -> dict[str, list[str]]:
    """What the peers' virtualenv installs, per peer. wordllama and bm25s are pinned to the versions in
    citesum's environment, so both sides embed with the same weights and code and run the same BM25 engine."""
    shared = [f"wordllama=={metadata.version('wordllama')}", f"bm25s=={metadata.version('bm25s')}"]
    return {"llamaindex": ["llama-index-core==0.14.*", "llama-index-retrievers-bm25", *shared],
            "haystack": ["haystack-ai==2.*", *shared]}


#: imported by the health check of each peer (a module that fails to import makes the peer unavailable)
_PEER_MODULES = {"llamaindex": ["llama_index.core", "llama_index.retrievers.bm25", "wordllama", "bm25s"],
                 "haystack": ["haystack", "wordllama"]}
_PEER_DISTRIBUTIONS = {"llamaindex": ["llama-index-core", "llama-index-retrievers-bm25"],
                       "haystack": ["haystack-ai"]}
_COMMON_DISTRIBUTIONS = ["wordllama", "bm25s", "PyStemmer", "numpy", "tokenizers", "pydantic"]


def _versions(distributions: Iterable[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in distributions:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _peer_health(python: Path, peer: str) -> dict[str, Any]:
    """{"ok": bool, "versions": {...}, "error": str} of one peer in the virtualenv at ``python``."""
    probe = (
        "import importlib, json, os, sys\n"
        "os.environ['HAYSTACK_TELEMETRY_ENABLED'] = 'False'\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from peers import _versions\n"
        f"for m in {_PEER_MODULES[peer]!r}: importlib.import_module(m)\n"
        f"print(json.dumps(_versions({_PEER_DISTRIBUTIONS[peer] + _COMMON_DISTRIBUTIONS!r})))\n"
    )
    done = subprocess.run([str(python), "-c", probe], check=False, capture_output=True, text=True, env=_worker_env())
    if done.returncode != 0:
        return {"ok": False, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return {"ok": True, "versions": json.loads(done.stdout.strip().splitlines()[-1])}


def _satisfies(versions: dict[str, str | None], requirements: list[str]) -> bool:
    """Whether the installed versions match the ``==`` pins (a ``==0.14.*`` pin matches by prefix)."""
    for requirement in requirements:
        if "==" not in requirement:
            continue
        name, wanted = requirement.split("==")
        have = versions.get(name)
        if have is None or not (have.startswith(wanted[:-1]) if wanted.endswith("*") else have == wanted):
            return False
    return True


def ensure_peers_venv(folder: Path, peers: Sequence[str]) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The peers' python, installing what is missing; and per peer its health (versions, or why it is out).

    A virtualenv that already has matching versions is reused as it is. A peer that does not install or
    import is reported, not fatal, unless no peer is left."""
    python = folder / "bin" / "python"
    if not python.exists() or subprocess.run([str(python), "-c", "pass"], check=False).returncode != 0:
        # missing, or left behind by a Python that is gone: make it anew
        print(f"creating {folder}", flush=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    requirements = _pinned_requirements()
    health: dict[str, dict[str, Any]] = {}
    for peer in peers:
        state = _peer_health(python, peer)
        if state["ok"] and _satisfies(state["versions"], requirements[peer]):
            health[peer] = state
            continue
        print(f"installing {peer} into {folder}: {' '.join(requirements[peer])}", flush=True)
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                  *requirements[peer]], check=False, capture_output=True, text=True)
        state = _peer_health(python, peer)
        if install.returncode != 0:
            errors = [line for line in install.stderr.splitlines() if "ERROR" in line]
            state = {"ok": False, "error": "pip install failed: " + " | ".join(errors[-3:] or ["(no message)"])}
        health[peer] = state
    if not any(state["ok"] for state in health.values()):
        raise SystemExit(f"no peer works in {folder}: {json.dumps(health)}")
    return python, health


def _worker_env() -> dict[str, str]:
    # Haystack sends anonymous usage events unless told not to; there is no network here anyway.
    return {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"}


# --------------------------------------------------------------------------------------------------------------
# Preparation (citesum's virtualenv): the corpus split into build and update documents, chunked once
# --------------------------------------------------------------------------------------------------------------

def _load_corpus(corpus: str, size: int) -> tuple[list[Any], list[str]]:
    """(documents, queries) of a corpus, as citesum's loaders give them."""
    if corpus == "summhay":
        from citesum.datasets.summhay import load_haystack

        haystack = load_haystack(SHARED_DATA / "summhay" / "topic_news1.json")
        return list(haystack.documents), [s.query for s in haystack.subtopics]
    if corpus == "meeting":
        from citesum.datasets import load_dataset

        dataset = load_dataset("odsum-meeting", str(SHARED_DATA / "odsum" / "meeting"))
        return list(dataset.documents), [q.text for q in dataset.queries]
    from citesum.demo.haystack import generate_haystack

    return list(generate_haystack(documents=size, seed=size).documents), list(GENERATED_QUERIES)


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str) + "\n")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _peer_inputs(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """What ``prepare`` wrote for a peer: the passages to build from, the passages to add, the queries."""
    return (_read_jsonl(folder / "build_passages.jsonl"), _read_jsonl(folder / "update_passages.jsonl"),
            json.loads((folder / "queries.json").read_text(encoding="utf-8")))


def prepare(corpus: str, size: int, folder: Path) -> dict[str, Any]:
    """Write the corpus for the workers: documents and their passages (citesum's chunker, the index's default
    settings), each split into the build part and the held-out update part, and the queries."""
    from citesum.chunking import make_units
    from citesum.index.store import IndexSettings
    from citesum.tokens import get_tokenizer

    documents, queries = _load_corpus(corpus, size)
    held_out = max(1, round(len(documents) * UPDATE_SHARE))
    # the last documents are held out: a fixed choice, the same for every library and run
    parts = {"build": documents[:-held_out], "update": documents[-held_out:]}
    settings = IndexSettings()
    tokenizer = get_tokenizer(settings.tokenizer)
    counts: dict[str, int] = {}
    for part, group in parts.items():
        _write_jsonl(folder / f"{part}_documents.jsonl",
                     ({"id": d.id, "title": d.title, "text": d.text, "source": d.source, "format": d.format,
                       "metadata": dict(d.metadata)} for d in group))
        passages = [p for d in group for p in make_units(d, tokenizer, settings.unit, settings.max_tokens)]
        _write_jsonl(folder / f"{part}_passages.jsonl", ({"id": p.id, "text": p.text} for p in passages))
        counts[f"{part}_documents"], counts[f"{part}_passages"] = len(group), len(passages)
    (folder / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    return {**counts, "queries": len(queries), "words": sum(len(d.text.split()) for d in documents),
            "unit": f"{settings.unit} ({settings.max_tokens} {settings.tokenizer} tokens, sentence-aware)"}


# --------------------------------------------------------------------------------------------------------------
# Shared by the workers
# --------------------------------------------------------------------------------------------------------------

def _timed_queries(queries: list[str]) -> list[str]:
    """The queries to time: the list, repeated up to MIN_TIMED_QUERIES."""
    repeats = -(-MIN_TIMED_QUERIES // len(queries))
    return queries * repeats


def time_queries(search: Callable[[str], Any], ids_of: Callable[[Any], list[str]],
                 queries: list[str]) -> dict[str, Any]:
    """p50/p95 ms of ``search`` over the queries (after a warm-up on the first few), and the ids it returned
    for each distinct query (read outside the timed call), to check that the libraries rank alike."""
    for query in queries[:WARMUP_QUERIES]:
        search(query)
    times, top_ids = [], []
    for number, query in enumerate(_timed_queries(queries)):
        started = time.perf_counter()
        result = search(query)
        times.append((time.perf_counter() - started) * 1000)
        if number < len(queries):
            top_ids.append(ids_of(result))
    return {"p50_ms": round(float(np.percentile(times, 50)), 3), "p95_ms": round(float(np.percentile(times, 95)), 3),
            "timed": len(times), "top_ids": top_ids}


def _import_first(modules: Iterable[str]) -> None:
    """Import what a build will use before its timer starts, on every side: citesum imports its dependencies
    lazily, on first use, and the build figure is meant to time index creation, not Python imports. Model
    weights and tokenizer files still load inside the timer."""
    for module in modules:
        importlib.import_module(module)


def _wordllama_model() -> Any:
    """The wordllama model exactly as citesum.embed.wordllama loads it: the wheel's own 256-d weights, no
    download, no truncation."""
    import wordllama

    return wordllama.WordLlama.load(dim=WORDLLAMA_DIM, trunc_dim=None, cache_dir=Path(wordllama.__file__).parent,
                                    disable_download=True)


def _embed(model: Any, texts: Sequence[str]) -> np.ndarray:
    """Rows of unit length, float32, as citesum's Embedder does (its ``normalize``)."""
    vectors = np.asarray(model.embed(list(texts)), dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


# --------------------------------------------------------------------------------------------------------------
# citesum worker (citesum's virtualenv)
# --------------------------------------------------------------------------------------------------------------

def run_citesum(folder: Path) -> dict[str, Any]:
    import citesum
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever
    from citesum.types import Document

    _import_first(["citesum.chunking", "citesum.embed.wordllama", "citesum.index.lexical", "citesum.retrieve.fusion",
                   "wordllama", "bm25s", "Stemmer", "tiktoken"])
    imported_rss = peak_rss_mb()
    build_documents = [Document(**row) for row in _read_jsonl(folder / "build_documents.jsonl")]
    update_documents = [Document(**row) for row in _read_jsonl(folder / "update_documents.jsonl")]
    queries = json.loads((folder / "queries.json").read_text(encoding="utf-8"))
    result: dict[str, Any] = {"library": "citesum", "rss_after_import_mb": round(imported_rss, 1)}
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        index = Index.create(Path(scratch) / "ix")
        index.add(build_documents)
        index.passages  # noqa: B018 - reads the new generation's passages, vectors and BM25 into memory
        result["build_seconds"] = round(time.perf_counter() - started, 3)
        result["units"] = len(index.passages)

        result["search"] = {}
        for label, name in CITESUM_PATHS.items():
            search = partial(get_retriever(name, index).retrieve, k=TOP_K)
            result["search"][label] = time_queries(search, lambda hits: [h.passage.id for h in hits], queries)

        started = time.perf_counter()
        index.add(update_documents)
        index.passages  # noqa: B018 - the update counts until its passages can be retrieved
        result["update_seconds"] = round(time.perf_counter() - started, 3)
        result["units_after_update"] = len(index.passages)
        result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    result["versions"] = {"citesum": citesum.__version__, **_versions(_COMMON_DISTRIBUTIONS)}
    return result


# --------------------------------------------------------------------------------------------------------------
# LlamaIndex worker (peers' virtualenv)
# --------------------------------------------------------------------------------------------------------------

def _llamaindex_embedding() -> Any:
    """A LlamaIndex BaseEmbedding over wordllama, loaded and normalised as citesum does. LlamaIndex's interface
    wants lists of floats, so the rows are converted: that is part of its cost."""
    from llama_index.core.embeddings import BaseEmbedding
    from pydantic import PrivateAttr

    class WordLlamaEmbedding(BaseEmbedding):
        _model: Any = PrivateAttr()

        def __init__(self) -> None:
            super().__init__(model_name=f"wordllama-{WORDLLAMA_DIM}", embed_batch_size=EMBED_BATCH)
            self._model = _wordllama_model()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return _embed(self._model, texts).tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embeddings([query])[0]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return WordLlamaEmbedding()


def _llamaindex_retrievers(index: Any, nodes: list[Any]) -> dict[str, Any]:
    """The three query paths over a built VectorStoreIndex and its nodes. The BM25 retriever indexes the nodes
    here (bm25s builds its matrices once), so it is part of the build and of every update."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.retrievers.bm25 import BM25Retriever

    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=TOP_K)
    dense = index.as_retriever(similarity_top_k=TOP_K)
    # num_queries=1: no LLM query generation (MockLLM only keeps it from resolving the default OpenAI LLM);
    # use_async=False: both retrievers are CPU-bound in this process, so an event loop would only add overhead
    fusion = QueryFusionRetriever([bm25, dense], llm=MockLLM(), mode="reciprocal_rerank", num_queries=1,
                                  similarity_top_k=TOP_K, use_async=False)
    return {"bm25": bm25, "dense": dense, "fusion": fusion}


def run_llamaindex(folder: Path) -> dict[str, Any]:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import Document as LlamaDocument
    from llama_index.core.schema import TextNode

    _import_first(["wordllama", "llama_index.core.llms", "llama_index.core.retrievers", "llama_index.retrievers.bm25"])
    imported_rss = peak_rss_mb()
    build_passages, update_passages, queries = _peer_inputs(folder)
    result: dict[str, Any] = {"library": "llamaindex", "rss_after_import_mb": round(imported_rss, 1)}

    started = time.perf_counter()
    embedding = _llamaindex_embedding()
    nodes = [TextNode(id_=p["id"], text=p["text"]) for p in build_passages]
    index = VectorStoreIndex(nodes, embed_model=embedding)
    retrievers = _llamaindex_retrievers(index, nodes)
    result["build_seconds"] = round(time.perf_counter() - started, 3)
    result["units"] = len(index.index_struct.nodes_dict)

    def ids_of(found: list[Any]) -> list[str]:
        return [n.node.node_id for n in found]

    result["search"] = {label: time_queries(retrievers[label].retrieve, ids_of, queries) for label in COMPARED_PATHS}

    started = time.perf_counter()
    new_nodes = [TextNode(id_=p["id"], text=p["text"]) for p in update_passages]
    index.insert_nodes(new_nodes)
    nodes += new_nodes
    retrievers = _llamaindex_retrievers(index, nodes)
    result["update_seconds"] = round(time.perf_counter() - started, 3)
    result["units_after_update"] = len(index.index_struct.nodes_dict)
    result["bm25_units_after_update"] = int(retrievers["bm25"].bm25.scores["num_docs"])
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)  # before the extra figures below, which are not the run's

    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        index.storage_context.persist(persist_dir=scratch)
        retrievers["bm25"].persist(str(Path(scratch) / "bm25"))
        result["persist_seconds"] = round(time.perf_counter() - started, 3)
    del index, retrievers, nodes, new_nodes, build_passages
    gc.collect()

    # The second build figure: LlamaIndex chunks the raw documents itself (its units, not ours).
    documents = _read_jsonl(folder / "build_documents.jsonl")
    started = time.perf_counter()
    embedding = _llamaindex_embedding()
    splitter = SentenceSplitter(chunk_size=100, chunk_overlap=0)
    own_nodes = splitter.get_nodes_from_documents([LlamaDocument(id_=d["id"], text=d["text"]) for d in documents])
    own_index = VectorStoreIndex(own_nodes, embed_model=embedding)
    _llamaindex_retrievers(own_index, own_nodes)
    result["build_from_documents_seconds"] = round(time.perf_counter() - started, 3)
    result["units_from_documents"] = len(own_nodes)
    result["versions"] = _versions(_PEER_DISTRIBUTIONS["llamaindex"] + _COMMON_DISTRIBUTIONS)
    return result


# --------------------------------------------------------------------------------------------------------------
# Haystack worker (peers' virtualenv)
# --------------------------------------------------------------------------------------------------------------

def _haystack_components() -> tuple[type, type]:
    """Haystack text and document embedder components over wordllama, loaded and normalised as citesum does."""
    from haystack import Document, component

    @component
    class WordLlamaTextEmbedder:
        def __init__(self, model: Any) -> None:
            self.model = model

        @component.output_types(embedding=list[float])
        def run(self, text: str) -> dict[str, Any]:
            return {"embedding": _embed(self.model, [text])[0].tolist()}

    @component
    class WordLlamaDocumentEmbedder:
        def __init__(self, model: Any) -> None:
            self.model = model

        # list[Any], not list[Document]: Haystack reads the hints with the module's globals, where
        # Document (imported here) is not
        @component.output_types(documents=list[Document])
        def run(self, documents: list[Any]) -> dict[str, Any]:
            for start in range(0, len(documents), EMBED_BATCH):
                batch = documents[start : start + EMBED_BATCH]
                for document, vector in zip(batch, _embed(self.model, [d.content for d in batch])):
                    document.embedding = vector.tolist()
            return {"documents": documents}

    return WordLlamaTextEmbedder, WordLlamaDocumentEmbedder


def _haystack_pipelines(store: Any, model: Any, text_embedder: type) -> dict[str, Callable[[str], list[Any]]]:
    """The three query paths as Haystack pipelines over the store (they read it on each query, so an update
    needs no new pipeline)."""
    from haystack import Pipeline
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )

    bm25 = Pipeline()
    bm25.add_component("bm25", InMemoryBM25Retriever(store, top_k=TOP_K))
    dense = Pipeline()
    dense.add_component("embedder", text_embedder(model))
    dense.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=TOP_K))
    dense.connect("embedder.embedding", "dense.query_embedding")
    fusion = Pipeline()
    fusion.add_component("embedder", text_embedder(model))
    fusion.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=TOP_K))
    fusion.add_component("bm25", InMemoryBM25Retriever(store, top_k=TOP_K))
    fusion.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=TOP_K))
    fusion.connect("embedder.embedding", "dense.query_embedding")
    fusion.connect("bm25.documents", "joiner.documents")
    fusion.connect("dense.documents", "joiner.documents")
    return {"bm25": lambda q: bm25.run({"bm25": {"query": q}})["bm25"]["documents"],
            "dense": lambda q: dense.run({"embedder": {"text": q}})["dense"]["documents"],
            "fusion": lambda q: fusion.run({"embedder": {"text": q}, "bm25": {"query": q}})["joiner"]["documents"]}


def run_haystack(folder: Path) -> dict[str, Any]:
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    text_embedder, document_embedder = _haystack_components()
    _import_first(["wordllama", "haystack.components.joiners", "haystack.components.retrievers.in_memory"])
    imported_rss = peak_rss_mb()
    build_passages, update_passages, queries = _peer_inputs(folder)
    result: dict[str, Any] = {"library": "haystack", "rss_after_import_mb": round(imported_rss, 1)}

    started = time.perf_counter()
    model = _wordllama_model()
    store = InMemoryDocumentStore()  # its defaults: BM25L, dot product (our vectors have unit length)
    documents = [Document(id=p["id"], content=p["text"]) for p in build_passages]
    store.write_documents(document_embedder(model).run(documents)["documents"])
    pipelines = _haystack_pipelines(store, model, text_embedder)
    result["build_seconds"] = round(time.perf_counter() - started, 3)
    result["units"] = store.count_documents()

    def ids_of(found: list[Any]) -> list[str]:
        return [d.id for d in found]

    result["search"] = {label: time_queries(pipelines[label], ids_of, queries) for label in COMPARED_PATHS}

    started = time.perf_counter()
    new_documents = [Document(id=p["id"], content=p["text"]) for p in update_passages]
    store.write_documents(document_embedder(model).run(new_documents)["documents"])
    result["update_seconds"] = round(time.perf_counter() - started, 3)
    result["units_after_update"] = store.count_documents()
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)

    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        store.save_to_disk(str(Path(scratch) / "store.json"))
        result["persist_seconds"] = round(time.perf_counter() - started, 3)
    result["versions"] = _versions(_PEER_DISTRIBUTIONS["haystack"] + _COMMON_DISTRIBUTIONS)
    return result


WORKERS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "citesum": run_citesum, "llamaindex": run_llamaindex, "haystack": run_haystack}


# --------------------------------------------------------------------------------------------------------------
# Orchestration (citesum's virtualenv)
# --------------------------------------------------------------------------------------------------------------

def _subprocess_json(command: list[str]) -> dict[str, Any]:
    """Run one worker; its JSON result is the last line it prints."""
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=_worker_env())
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, Any]], *keys: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in keys:
            value = value[key]
        values.append(value)
    return round(statistics.median(values), 3)


def _agreement(left: list[list[str]], right: list[list[str]], text_of: dict[str, str]) -> float:
    """Mean share, over the queries, of the distinct passage texts in two top-20 lists that both have. Texts,
    not ids: a corpus may hold the same passage many times (a quarter of the generated one's are repeats), and
    the libraries break score ties between the copies differently (LlamaIndex by node id)."""
    shared = []
    for ids_a, ids_b in zip(left, right):
        texts_a, texts_b = {text_of[i] for i in ids_a}, {text_of[i] for i in ids_b}
        shared.append(len(texts_a & texts_b) / max(len(texts_a), len(texts_b), 1))
    return round(statistics.mean(shared), 3)


def summarize(library: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the runs of one library on one corpus."""
    paths = CITESUM_PATHS if library == "citesum" else COMPARED_PATHS
    summary: dict[str, Any] = {
        "build_seconds": _median(runs, "build_seconds"), "peak_rss_mb": _median(runs, "peak_rss_mb"),
        "rss_after_import_mb": _median(runs, "rss_after_import_mb"),
        "search": {p: {"p50_ms": _median(runs, "search", p, "p50_ms"), "p95_ms": _median(runs, "search", p, "p95_ms")}
                   for p in paths},
        "update_seconds": _median(runs, "update_seconds"),
        "units": runs[0]["units"], "units_after_update": runs[0]["units_after_update"],
    }
    for extra in ("persist_seconds", "build_from_documents_seconds"):
        if extra in runs[0]:
            summary[extra] = _median(runs, extra)
    if "units_from_documents" in runs[0]:
        summary["units_from_documents"] = runs[0]["units_from_documents"]
    return summary


def ratios(peer: dict[str, Any], ours: dict[str, Any]) -> dict[str, float]:
    """peer / citesum of the medians: above 1, citesum is faster or smaller."""
    def ratio(a: float, b: float) -> float:
        return round(a / b, 2) if b else float("nan")

    out = {"build": ratio(peer["build_seconds"], ours["build_seconds"]),
           "peak_rss": ratio(peer["peak_rss_mb"], ours["peak_rss_mb"])}
    if "build_from_documents_seconds" in peer:
        out["build_from_documents"] = ratio(peer["build_from_documents_seconds"], ours["build_seconds"])
    if "persist_seconds" in peer:
        # documents (or passages) to a durable index, as citesum's build figure is
        start = peer.get("build_from_documents_seconds", peer["build_seconds"])
        out["build_and_persist"] = ratio(start + peer["persist_seconds"], ours["build_seconds"])
    for path in COMPARED_PATHS:
        for stat in ("p50_ms", "p95_ms"):
            out[f"{path}_{stat[:3]}"] = ratio(peer["search"][path][stat], ours["search"][path][stat])
    out["update"] = ratio(peer["update_seconds"], ours["update_seconds"])
    return out


def run_corpus(corpus: str, size: int, peers: list[str], peers_python: Path, runs: int) -> dict[str, Any]:
    """Prepare one corpus, run the libraries alternately ``runs`` times, and summarise."""
    here = str(Path(__file__).resolve())
    pythons = {"citesum": Path(sys.executable), **{peer: peers_python for peer in peers}}
    with tempfile.TemporaryDirectory(prefix="citesum-peers-") as scratch:
        corpus_info = _subprocess_json([sys.executable, here, "--prepare", corpus, str(size), scratch])
        print(corpus, json.dumps(corpus_info), flush=True)
        raw: dict[str, list[dict[str, Any]]] = {library: [] for library in pythons}
        for number in range(runs):
            for library, python in pythons.items():
                result = _subprocess_json([str(python), here, "--worker", library, scratch])
                raw[library].append(result)
                print(f"  run {number + 1} {library}: build {result['build_seconds']}s, "
                      f"rss {result['peak_rss_mb']} MB, update {result['update_seconds']}s, "
                      + ", ".join(f"{p} {s['p50_ms']}ms" for p, s in result["search"].items()), flush=True)
        text_of = {row["id"]: row["text"] for row in _read_jsonl(Path(scratch) / "build_passages.jsonl")}
    for library, library_runs in raw.items():  # every side must have indexed the units citesum's chunker gave
        if library_runs[0]["units"] != corpus_info["build_passages"]:
            raise SystemExit(f"{library} indexed {library_runs[0]['units']} units, not {corpus_info['build_passages']}")
    # the rankings of the first run, to show how alike the libraries rank (dense should agree almost fully)
    agreement = {peer: {path: _agreement(raw["citesum"][0]["search"][path]["top_ids"],
                                         raw[peer][0]["search"][path]["top_ids"], text_of)
                        for path in COMPARED_PATHS}
                 for peer in peers}
    for library_runs in raw.values():
        for run in library_runs:
            run.pop("versions")  # the result's top-level versions say it once
            for timing in run["search"].values():
                timing.pop("top_ids")
    medians = {library: summarize(library, library_runs) for library, library_runs in raw.items()}
    return {"corpus": corpus_info, **medians,
            "ratios_over_citesum": {peer: ratios(medians[peer], medians["citesum"]) for peer in peers},
            "top20_agreement_with_citesum": agreement, "runs": raw}


def _print_table(results: dict[str, Any], peers: list[str]) -> None:
    rows = [("build s", lambda s: s["build_seconds"]), ("peak RSS MB", lambda s: s["peak_rss_mb"]),
            *[(f"{p} {q} ms", lambda s, p=p, q=q: s["search"][p][f"{q}_ms"]) for p in COMPARED_PATHS
              for q in ("p50", "p95")],
            ("update s", lambda s: s["update_seconds"])]
    for label, entry in results.items():
        print(f"\n{label} ({entry['corpus']['build_passages']} units)")
        print(f"{'':16}{'citesum':>10}" + "".join(f"{peer:>12}{'ratio':>8}" for peer in peers))
        for name, get in rows:
            ours = get(entry["citesum"])
            line = f"{name:16}{ours:>10}"
            for peer in peers:
                theirs = get(entry[peer])
                line += f"{theirs:>12}{(theirs / ours if ours else float('nan')):>8.2f}"
            print(line)


CAVEATS = [
    ("citesum's build and update write a durable index (SQLite + generation files) and read it back into memory; "
     "the peers' indexes are in memory only (their own save is timed apart as persist_seconds)."),
    ("citesum's build starts from documents and includes its chunking; the peers' build_seconds starts from "
     "citesum's passage texts (no chunking); LlamaIndex's build_from_documents_seconds runs its SentenceSplitter "
     "(chunk_size=100, chunk_overlap=0, tiktoken cl100k) on the documents, which gives it other units."),
    ("citesum's hybrid:bm25+dense fuses each member's top 1,000 units with RRF (k=60); LlamaIndex's "
     "QueryFusionRetriever (reciprocal_rerank, k=60) and Haystack's DocumentJoiner (reciprocal_rank_fusion) fuse "
     "their two retrievers' top 20. LlamaIndex merges results by node content hash, so identical passages count once."),
    ("LlamaIndex's BM25Retriever is bm25s with our analyser (English stop words for the corpus, Snowball stemmer); "
     "per query it also rebuilds each hit's node from a stored metadata dict. Its dense path is SimpleVectorStore: "
     "per query it copies all embeddings (Python float lists) into a numpy array, builds a set of the retriever's "
     "node ids, and scores the vectors one at a time in a Python loop with a heap."),
    ("LlamaIndex's update = insert_nodes on the VectorStoreIndex (embeds the new nodes) + a new BM25Retriever over "
     "all nodes (bm25s cannot add to an index) + a new as_retriever() (a vector retriever keeps the node ids it "
     "was made with, so it would never return the new nodes) + a new QueryFusionRetriever."),
    ("Haystack's InMemoryBM25Retriever is its own pure-Python BM25L (regex tokens, no stemming or stop words), "
     "so its BM25 ranks differently; its embedding retrieval stacks all document embeddings into an array per "
     "query. Its queries run through Pipelines (one component for BM25). It gets no build-from-documents figure: "
     "its splitters count words or sentences, not tokens."),
    ("LlamaIndex's QueryFusionRetriever runs with use_async=False (its default, True, runs the same CPU-bound "
     "retrievers through an event loop in this thread: about 0.1-0.2 ms more a query on a small corpus)."),
    ("The wordllama embedding (same weights, same pinned version, L2-normalised, 256 texts a call) is the same "
     "on every side (LlamaIndex's embed_batch_size is set to 256 from its default 10, to match citesum's "
     "batches); LlamaIndex and Haystack convert each vector to a Python list of floats, as their "
     "interfaces require."),
]


def _citesum_commit() -> str:
    """HEAD of the citesum checkout, with "+changes" when its src/ differs from it."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, check=False, capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=root, check=False).returncode != 0
    return (head or "unknown") + ("+changes" if dirty else "")


def _earlier_results() -> dict[str, Any]:
    """The corpora of the previous results file, each with its own ``measured`` record (date, commit, load);
    those written before corpora had one get the file's date and commit."""
    path = Path(__file__).resolve().parent / "results" / "peers.json"
    if not path.exists():
        return {}
    earlier = json.loads(path.read_text(encoding="utf-8"))
    for entry in earlier.get("results", {}).values():
        entry.setdefault("measured", {"date": earlier.get("date"), "citesum_commit": earlier.get("citesum_commit"),
                                      "load_average_1_5_15": earlier.get("load_average_1_5_15")})
    return earlier.get("results", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000", help="generated corpus sizes, comma-separated ('' for none)")
    parser.add_argument("--corpora", default="summhay,meeting,generated")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peers-venv", type=Path, default=DEFAULT_PEERS_VENV)
    parser.add_argument("--fresh", action="store_true",
                        help="drop the corpora of the previous results file instead of keeping those not run now")
    parser.add_argument("--prepare", nargs=3, help=argparse.SUPPRESS)  # internal: corpus size folder
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)  # internal: library folder
    args = parser.parse_args()
    if args.prepare:
        corpus, size, folder = args.prepare
        print(json.dumps(prepare(corpus, int(size), Path(folder))))
        return
    if args.worker:
        library, folder = args.worker
        print(json.dumps(WORKERS[library](Path(folder))))
        return

    peers = [p for p in args.peers.split(",") if p]
    unknown = set(peers) - set(PEERS)
    if unknown:
        parser.error(f"unknown peers: {', '.join(sorted(unknown))}; choose from {', '.join(PEERS)}")
    peers_python, health = ensure_peers_venv(args.peers_venv, peers)
    working = [peer for peer in peers if health[peer]["ok"]]
    for peer in set(peers) - set(working):
        print(f"skipping {peer}: {health[peer]['error']}", flush=True)

    plan = []
    for corpus in args.corpora.split(","):
        if corpus == "generated":
            plan += [(f"generated_{size}", corpus, int(size)) for size in args.sizes.split(",") if size]
        else:
            plan.append((corpus, corpus, 0))
    commit = _citesum_commit()
    results = {}
    for label, corpus, size in plan:
        # the machine has 2 cores: another busy process shows in the latencies, so each corpus records the load
        load_before, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M:%S")
        results[label] = run_corpus(corpus, size, working, peers_python, args.runs)
        results[label]["measured"] = {
            "date": started, "citesum_commit": commit,
            "load_average_1_5_15": {"before": [round(x, 2) for x in load_before],
                                    "after": [round(x, 2) for x in os.getloadavg()]}}
    _print_table(results, working)
    if not args.fresh:
        # a long corpus (100K documents: about an hour) can be run alone and added to the others' results
        results = {**_earlier_results(), **results}
    write_result("peers", {
        "embedder": f"wordllama ({WORDLLAMA_DIM}-d bundled weights, L2-normalised, {EMBED_BATCH} texts a call)",
        "top_k": TOP_K, "runs": args.runs,
        "method": "each run a fresh subprocess; libraries alternate run by run; medians over the runs; ratios are "
                  "peer / citesum of the medians (above 1: citesum faster or smaller)",
        "figures": {
            "build_seconds": "citesum: Index.create + add(documents) + loading the generation into memory; "
                             "peers: passage texts (citesum's chunks) to queryable index; model weights and "
                             "tokenizer files load inside the timer, Python imports before it",
            "build_from_documents_seconds": "LlamaIndex only: SentenceSplitter(chunk_size=100, chunk_overlap=0) on "
                                            "the raw documents, then the same build (its own units)",
            "persist_seconds": "peers only: their own save of the built index (not part of build_seconds)",
            "peak_rss_mb": "ru_maxrss of the run up to the end of the update (the extra figures come after)",
            "search": "ms per query, top 20, after a warm-up; bm25, dense, fusion (RRF of the two); citesum's "
                      "hybrid_default (RM3 + Rocchio feedback) has no peer counterpart",
            "update_seconds": f"adding the held-out {UPDATE_SHARE:.0%} of the documents until retrievable",
            "top20_agreement_with_citesum": "mean share of the distinct passage texts in a peer's top 20 that "
                                            "citesum's top 20 also has (first run, before the update)",
        },
        "versions": {"citesum_venv": _versions(["citesum", *_COMMON_DISTRIBUTIONS]),
                     **{f"{peer}_venv": health[peer].get("versions") for peer in working}},
        "peers": {peer: ("measured" if health[peer]["ok"] else f"skipped: {health[peer]['error']}") for peer in peers},
        "caveats": CAVEATS, "results": results,
    })


if __name__ == "__main__":
    main()
