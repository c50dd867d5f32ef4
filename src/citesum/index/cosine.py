"""The cosine score of unit vectors against a query vector: the one kernel every query-time score of a unit that
citesum computes goes through (dense search over the local store, the graph's candidates, RAPTOR's collapsed
tree, the service's evidence; a Milvus store's dense search is scored by the server).

NumPy's ``vecdot``: one dot product a row (BLAS's single-threaded ``sdot`` on each), not a matrix-vector
product, for two reasons:

- a row's score does not depend on the matrix it is in. OpenBLAS sums a row differently by its place in a
  block, so the same vector scored among a graph's candidates and among all of its segment's rows, or a copy
  of a unit beside it, could differ in the last bit, and ties that decide an order would not be ties;
- it runs on the calling thread and lets go of Python's lock. OpenBLAS spreads any product of more than about
  9,000 numbers over every core, and its threads spin after each one, taking the core the other members of a
  fusion rank on.

In a scratch comparison (256-d float32, against a BLAS product on both cores) it was somewhat slower on rows
held in cache and faster on rows read from memory; NumPy's ``einsum``, tried first, was slower than it at every
size.

Summarization's own products (citation checks, the extractive summarizer, ReadAgent's pages) score statements
and sentences, not units, and keep NumPy's matrix product.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def cosine_scores(vectors: Any, query: np.ndarray) -> np.ndarray:
    """``vectors @ query`` (rows L2-normalised: cosines) in float32, each row summed the same way wherever it is.
    ``vectors``: an array, or an object holding them in parts that computes its own product with this function
    (a generation's vectors across segments, a Milvus store's stored vectors)."""
    if not isinstance(vectors, np.ndarray) and hasattr(type(vectors), "__matmul__"):
        return np.asarray(vectors @ query, dtype=np.float32)
    # contiguous rows and query: a strided one would be summed by another loop, to other last bits
    rows = np.ascontiguousarray(vectors, dtype=None if isinstance(vectors, np.ndarray) else np.float32)
    return np.vecdot(rows, np.ascontiguousarray(query, dtype=rows.dtype)).astype(np.float32, copy=False)
