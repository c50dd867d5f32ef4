"""WordLlama static embeddings (the default): bundled in the wheel, no torch, and fast on a CPU (the index builds
of benchmarks/speed.py measure it)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from citesum.embed.base import Embedder, TokenVectors, normalize
from citesum.errors import ConfigError


#: the one weight file the wordllama wheel ships; smaller dimensions are its Matryoshka truncations
BUNDLED_DIM = 256
TRUNCATED_DIMS = (64, 128)


class WordLlamaEmbedder(Embedder):
    def __init__(self, dim: int = BUNDLED_DIM) -> None:
        import wordllama

        if dim != BUNDLED_DIM and dim not in TRUNCATED_DIMS:
            raise ConfigError(
                f"wordllama-{dim}: the wordllama package ships only its {BUNDLED_DIM}-d weights, so the offline "
                f"choices are wordllama ({BUNDLED_DIM}) and wordllama-{'/'.join(map(str, TRUNCATED_DIMS))} "
                "(truncations of them); citesum never downloads weights")
        # disable_download: the weights ship inside the package; never reach for the network. The model was
        # trained with Matryoshka losses, so the first 64 or 128 dimensions are an embedding of their own.
        self._model = wordllama.WordLlama.load(
            dim=BUNDLED_DIM, trunc_dim=None if dim == BUNDLED_DIM else dim,
            cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        self.dim = dim
        self.name = "wordllama" if dim == BUNDLED_DIM else f"wordllama-{dim}"

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.embed(list(texts)), dtype=np.float32)

    def encode_tokens(self, texts: Sequence[str]) -> list[TokenVectors]:
        # Static vectors: the rows of the embedding table that the model averages into its text vector.
        table = self._model.embedding
        result = []
        for encoding in self._model.tokenize(list(texts)):
            keep = [k for k, mask in enumerate(encoding.attention_mask) if mask and encoding.special_tokens_mask[k] == 0]
            ids = np.clip(np.asarray(encoding.ids)[keep], 0, table.shape[0] - 1)
            result.append(TokenVectors(tuple(encoding.tokens[k] for k in keep),
                                       normalize(table[ids] if keep else np.zeros((0, table.shape[1])))))
        return result
