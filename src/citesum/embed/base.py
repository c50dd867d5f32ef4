"""The embedder interface: separate query and document encoding, L2-normalised float32 rows."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.tokens import clip_query


@dataclass(frozen=True)
class TokenVectors:
    """One text as the model sees it: its word pieces and one unit-length vector per piece."""

    tokens: tuple[str, ...]
    vectors: np.ndarray  # (len(tokens), dim) float32


class Embedder(ABC):
    """Maps texts to unit-length float32 vectors, so a dot product is the cosine similarity.

    Subclasses implement :meth:`_encode`; asymmetric models (e5) override the query/document methods.
    """

    #: Registry name stored in the index manifest; opening an index with another embedder is refused.
    name: str
    dim: int

    @abstractmethod
    def _encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [self._encode(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
        return normalize(np.vstack(batches))

    def encode_query(self, text: str) -> np.ndarray:
        """The query's vector, from its first :data:`~citesum.tokens.MAX_QUERY_TOKENS` tokens."""
        return self._query_vector(clip_query(text))

    def _query_vector(self, text: str) -> np.ndarray:
        """:meth:`encode_query` of a text already clipped (what an asymmetric model overrides)."""
        return normalize(self._encode([text]))[0]

    def encode_tokens(self, texts: Sequence[str]) -> list[TokenVectors]:
        """Per-piece vectors (special tokens left out), for token alignment such as the offline judge's."""
        raise ConfigError(f"embedder '{self.name}' gives no token vectors (use minilm, st:<model> or wordllama)")

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """:meth:`encode_documents` and :meth:`encode_tokens` together (one model pass where the model allows)."""
        return self.encode_documents(texts), self.encode_tokens(texts)


def normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)
