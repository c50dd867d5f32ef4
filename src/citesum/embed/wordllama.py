"""WordLlama static embeddings (the default): bundled in the wheel, no torch, ~3,000 passages/s on 2 cores."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from citesum.embed.base import Embedder


class WordLlamaEmbedder(Embedder):
    def __init__(self, dim: int = 256) -> None:
        import wordllama

        # disable_download: the weights ship inside the package; never reach for the network.
        self._model = wordllama.WordLlama.load(
            dim=dim, cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        self.dim = dim
        self.name = "wordllama" if dim == 256 else f"wordllama-{dim}"

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.embed(list(texts)), dtype=np.float32)
