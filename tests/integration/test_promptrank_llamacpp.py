"""PromptRank's likelihood with the real packaged SmolLM2-135M: in this process (llama-cpp-python) and through a
real llama.cpp server (llama_cpp.server on loopback, its /v1/completions echoing the prompt's log-probabilities).

What the server echoes is not log P(token | the tokens before it) for SmolLM2: llama-cpp-python 0.3.36 pairs each
echoed token with the logits computed *after* it when the model has no BOS token (it drops a BOS before
pairing; abetlen/llama-cpp-python issue 1983). The test pins that, so that a fixed server shows up here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from citesum.index.store import Index, IndexSettings
from citesum.llm.likelihood import CompletionsLikelihood, LlamaCppLikelihood
from citesum.retrieve import get_retriever
from citesum.retrieve.promptrank import PromptRankRetriever, chain_prompt
from citesum.types import Document
from live import llama_cpp_server

ANSWERS = ("Mara Ellison kept the lighthouse on Gull Island for thirty winters. Every night she climbed the "
           "ninety-one steps and wrote the weather in a green ledger.")
UNRELATED = ("Quarterly revenue from cloud subscriptions rose, while hardware margins narrowed because of "
             "component shortages in the second half of the fiscal year.")
FERRY = "The ferry to the mainland leaves at seven and returns at six."
QUESTION = " Who kept the lighthouse on Gull Island?"


@pytest.fixture(scope="module")
def completions_server(tmp_path_factory: pytest.TempPathFactory, packaged_smollm2: str) -> Iterator[str]:
    yield from llama_cpp_server(packaged_smollm2, tmp_path_factory.mktemp("llama") / "server.log", n_ctx=512, n_threads=1)


def test_the_server_echoes_what_the_process_computes(completions_server: str, packaged_smollm2: str) -> None:
    prompts = [chain_prompt([ANSWERS]), chain_prompt([UNRELATED])]
    likelihood = LlamaCppLikelihood(packaged_smollm2, n_ctx=512, n_threads=1)
    here = likelihood.log_likelihoods(prompts, QUESTION)
    served = CompletionsLikelihood("smollm2", completions_server, timeout=120).log_likelihoods(prompts, QUESTION)
    # what llama-cpp-python echoes for a model without BOS: each token scored by the logits after it, i.e. as the
    # next token after itself (a one-token continuation of the text up to and including it)
    question = likelihood.tokenize(QUESTION, bos=False)
    echoed = [sum(float(likelihood.token_log_probs(likelihood.tokenize(prompt, bos=True) + question[: j + 1],
                                                   question[j : j + 1])[0]) for j in range(len(question)))
              for prompt in prompts]
    # the client reads the echo exactly (offsets, the generated token left out): seen to agree within 1e-5
    np.testing.assert_allclose(served, echoed, atol=1e-3)
    # ...and it is not log P(question | prompt): the backends differ by tens of nats on these texts
    assert np.all(np.abs(served - here) > 10)
    assert here[0] > here[1] and np.all(here < 0)  # the answering passage makes the question likelier


def test_n_threads_bounds_batches_too(packaged_smollm2: str) -> None:
    # a prompt is evaluated as a batch; llama-cpp-python gives batches every core unless told otherwise
    params = LlamaCppLikelihood(packaged_smollm2, n_ctx=512, n_threads=1)._model.context_params
    assert (params.n_threads, params.n_threads_batch) == (1, 1)


def test_the_kv_cache_kept_between_texts_does_not_change_a_score(packaged_smollm2: str) -> None:
    likelihood = LlamaCppLikelihood(packaged_smollm2, n_ctx=512, n_threads=1)
    shared = chain_prompt([ANSWERS, UNRELATED])
    first = likelihood.log_likelihoods([shared, chain_prompt([ANSWERS]), shared], QUESTION)
    fresh = LlamaCppLikelihood(packaged_smollm2, n_ctx=512, n_threads=1).log_likelihoods([shared], QUESTION)
    assert first[2] == pytest.approx(first[0], abs=1e-4) and fresh[0] == pytest.approx(first[0], abs=1e-4)
    assert likelihood.calls == 3


def test_promptrank_ranks_the_answering_passage_first(tmp_path: Path, packaged_smollm2: str) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    index.add([Document(id="revenue", title="", text=UNRELATED), Document(id="keeper", title="", text=ANSWERS),
               Document(id="ferry", title="", text=FERRY)])
    likelihood = LlamaCppLikelihood(packaged_smollm2, n_ctx=512, n_threads=1)
    # the random base puts no weight on the question's words: the order comes from the language model
    base = get_retriever("random", index)
    one_hop = PromptRankRetriever(index, base, likelihood, hops=1).rank_documents(QUESTION)
    assert [d for d, _ in one_hop][0] == "keeper" and likelihood.calls == 3
    # two hops: the likeliest chain is (ferry, keeper), the LM reading the passage next to the question most,
    # and a chain's units rank in chain order (the paper's flattening): keeper still before the revenue report
    two_hops = [d for d, _ in PromptRankRetriever(index, base, likelihood).rank_documents(QUESTION)]
    assert two_hops.index("keeper") < two_hops.index("revenue") and "keeper" in two_hops[:2]
    assert likelihood.calls == 3 + 3 + 3 * 2
