"""Estimating the context budget of a RAG pipeline with silver references (Pratapa & Mitamura).

The budget that gives the best summaries depends on the data, the retriever and the summarizer. Without gold
references it can be estimated:

1. take a sample of the examples (25% by default, fixed seed);
2. a panel of strong LMs, each given the full context, writes a few summaries per example: the candidates
   (:func:`panel_candidates`);
3. minimum Bayes risk: each candidate is scored by its mean utility against the other candidates and the best
   3 are the example's silver references (:func:`mbr_select`);
4. the pipeline runs at every budget of a grid, a few samples each, and each summary scores its best utility
   against the silver references; mean and standard deviation over the sample sets;
5. the estimate is the smallest budget whose mean is within one standard deviation of the best mean
   (:func:`estimate_budget`).

Fixed budgets (a model's published effective context length, :mod:`citesum.effective_context`) and the full
context are scored the same way, on the same examples and silver references (:func:`score_baselines`).

The utility is pluggable; the default is the mean of ROUGE-1/2/L F1 (the paper uses A3CU F1, a learned
metric that does not run offline).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.index.store import Index
from citesum.llm.base import LLM, ChatRequest
from citesum.parallel import BatchExecutor, InProcess
from citesum.summarize import Summarizer
from citesum.summarize.citations import strip_citations
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
from citesum.summarize.llm import LLMSummarizer

#: the paper's grid (Pratapa & Mitamura): 8K to 80K tokens in steps of 8K, with K = 1,024 as the paper and the
#: long-context benchmarks count ("8K" = 8,192), so a RULER or HELMET length such as 32K falls on the grid
PAPER_BUDGETS = tuple(range(8_192, 81_921, 8_192))
#: the answer's tokens of an estimation's runs with an LLM, and the room a window keeps for it: the figure the
#: estimations were measured with (a paragraph of ``words`` words, not bullets; see ``answer_tokens``)
ESTIMATION_ANSWER_TOKENS = 1024


def parse_budgets(text: str) -> list[int]:
    """A budget grid from the command line: comma-separated token counts, or ``paper`` for
    :data:`PAPER_BUDGETS` (models with windows of 81,920 tokens or more)."""
    if text.strip().lower() == "paper":
        return list(PAPER_BUDGETS)
    try:
        grid = sorted({int(b) for b in text.split(",") if b.strip()})
    except ValueError as exc:
        raise ConfigError(f"--budgets must be comma-separated token counts or 'paper', got '{text}'") from exc
    if not grid or grid[0] < 1:
        raise ConfigError(f"--budgets must be positive token counts, got '{text}'")
    return grid

#: utility(candidate, reference) -> similarity, higher is better
Utility = Callable[[str, str], float]
#: summarize(example id, budget, sample number) -> summary text
PipelineRun = Callable[[str, int, int], str]


#: how reports name :func:`rouge_utility`, so that every number says which utility it used
ROUGE_UTILITY = "mean ROUGE-1/2/L F1"


def rouge_utility(candidate: str, reference: str) -> float:
    """Mean of ROUGE-1, ROUGE-2 and ROUGE-L F1 (extra ``eval``)."""
    from citesum.evaluate.rouge import rouge

    return float(np.mean(list(rouge(candidate, [reference]).values())))


def panel_candidates(prompt: str, panel: Sequence[LLM], *, samples: int = 3, temperature: float = 0.5,
                     max_tokens: int = 1024, seed: int = 0) -> list[str]:
    """Every panel model's ``samples`` answers to ``prompt`` (the full-context summarization prompt)."""
    out: list[str] = []
    for llm in panel:
        for sample in range(samples):
            completion = llm.complete(ChatRequest.from_prompt(prompt, temperature=temperature,
                                                              max_tokens=max_tokens, seed=seed + sample))
            out.extend(text for text in completion.texts if text.strip())
    return out


def mbr_select(candidates: Sequence[str], utility: Utility, keep: int = 3) -> list[int]:
    """Indices of the ``keep`` candidates with the highest mean utility against all other candidates (ties:
    the earlier candidate)."""
    n = len(candidates)
    if n == 0:
        raise ConfigError("minimum Bayes risk selection needs at least one candidate")
    if n == 1:
        return [0]
    agreement = np.array([np.mean([utility(candidates[i], candidates[j]) for j in range(n) if j != i])
                          for i in range(n)])
    return sorted(range(n), key=lambda i: (-agreement[i], i))[:keep]


def sample_examples(example_ids: Sequence[str], fraction: float = 0.25, seed: int = 0) -> list[str]:
    """A fixed random share of the examples (at least one), in their original order."""
    if not 0 < fraction <= 1:
        raise ConfigError(f"fraction must be in (0, 1], got {fraction}")
    count = max(1, round(fraction * len(example_ids)))
    chosen = set(random.Random(seed).sample(list(example_ids), count))
    return [e for e in example_ids if e in chosen]


@dataclass(frozen=True)
class BudgetEstimate:
    budget: int
    #: budget -> mean over the sample sets of the mean silver-reference utility over the examples
    means: dict[int, float]
    stds: dict[int, float]
    examples: tuple[str, ...]
    #: example id -> its silver references
    silver: dict[str, tuple[str, ...]]

    @property
    def best_budget(self) -> int:
        return max(self.means, key=lambda b: (self.means[b], -b))


def estimate_budget(candidates: Mapping[str, Sequence[str]], run: PipelineRun, budgets: Sequence[int], *,
                    utility: Utility = rouge_utility, samples: int = 3, fraction: float = 0.25, seed: int = 0,
                    references: int = 3, executor: BatchExecutor | None = None) -> BudgetEstimate:
    """Steps 1 and 3-5 above: ``candidates`` maps each example id to its panel's candidate summaries (step 2).
    The pipeline runs (every example at every budget, ``samples`` times) spread over ``executor``'s workers
    (default: one after the other here); ``run`` and ``utility`` then travel by pickling."""
    if not budgets or samples < 1:
        raise ConfigError("estimate_budget needs at least one budget and one sample")
    examples = sample_examples(list(candidates), fraction, seed)
    silver = {e: tuple(candidates[e][i] for i in mbr_select(candidates[e], utility, references)) for e in examples}
    means, stds = score_budgets(silver, run, sorted(budgets), utility=utility, samples=samples, executor=executor)
    best = max(means, key=lambda b: (means[b], -b))
    estimate = min(b for b in means if means[b] >= means[best] - stds[best])
    return BudgetEstimate(estimate, means, stds, tuple(examples), silver)


def score_budgets(silver: Mapping[str, Sequence[str]], run: PipelineRun, budgets: Sequence[int], *,
                  utility: Utility = rouge_utility, samples: int = 3,
                  executor: BatchExecutor | None = None) -> tuple[dict[int, float], dict[int, float]]:
    """Step 4 above on the examples of ``silver`` (example id -> its silver references): per budget, the mean
    over the ``samples`` sample sets of the examples' mean best utility, and its standard deviation across the
    sample sets. The runs spread over ``executor``'s workers as in :func:`estimate_budget`."""
    examples = list(silver)
    runs = [(e, budget, s) for budget in budgets for s in range(samples) for e in examples]
    scored = dict(zip(runs, (executor or InProcess()).map(_ScoredRun(run, utility, silver).score, runs)))
    means, stds = {}, {}
    for budget in budgets:
        per_sample = [float(np.mean([scored[(e, budget, s)] for e in examples])) for s in range(samples)]
        means[budget], stds[budget] = float(np.mean(per_sample)), float(np.std(per_sample))
    return means, stds


@dataclass(frozen=True)
class ScoredBudget:
    """A budget compared with the estimate: its name, its tokens, its silver-reference utility (mean, std)."""

    label: str
    budget: int
    mean: float
    std: float


def score_baselines(estimate: BudgetEstimate, baselines: Mapping[str, int], run: PipelineRun, *,
                    full_context: tuple[PipelineRun, int] | None = None, utility: Utility = rouge_utility,
                    samples: int = 3, executor: BatchExecutor | None = None) -> list[ScoredBudget]:
    """The estimate beside fixed budgets (``baselines``: name -> tokens) and, given as (its pipeline, its
    budget), the full context: each scored like the grid, on the estimate's examples against its silver
    references and under the same ``utility``, so the numbers compare. A fixed budget on the grid takes the
    grid's score (the same runs); the others are run here."""
    off_grid = sorted({b for b in baselines.values() if b not in estimate.means})
    means, stds = dict(estimate.means), dict(estimate.stds)
    found = score_budgets(estimate.silver, run, off_grid, utility=utility, samples=samples, executor=executor)
    means.update(found[0])
    stds.update(found[1])
    rows = [ScoredBudget("estimate", estimate.budget, means[estimate.budget], stds[estimate.budget])]
    rows += [ScoredBudget(label, budget, means[budget], stds[budget]) for label, budget in baselines.items()]
    if full_context is not None:
        full_run, full_budget = full_context
        full_mean, full_std = score_budgets(estimate.silver, full_run, [full_budget], utility=utility,
                                            samples=samples, executor=executor)
        rows.append(ScoredBudget("full context", full_budget, full_mean[full_budget], full_std[full_budget]))
    return rows


@dataclass(frozen=True)
class _ScoredRun:
    run: PipelineRun
    utility: Utility
    silver: Mapping[str, Sequence[str]]

    def score(self, example_budget_sample: tuple[str, int, int]) -> float:
        """The run's best utility against its example's silver references."""
        summary = self.run(*example_budget_sample)
        return max(self.utility(summary, reference) for reference in self.silver[example_budget_sample[0]])


@dataclass(frozen=True)
class IndexPipelineRun:
    """A :data:`PipelineRun` of citesum's pipeline over the index at ``index_dir``: example ids are positions in
    ``queries``, the sample number is the LLM's seed (temperature 0.5; the extractive summarizer, without an
    ``llm``, is deterministic). It holds the index by path, so it travels to workers, which open it once."""

    index_dir: str
    queries: tuple[str, ...]
    retriever: str = "hybrid"
    order: str = "original"
    words: int = 250
    llm: LLM | None = None

    def __call__(self, example: str, budget: int, sample: int) -> str:
        engine: Summarizer
        if self.llm is not None:
            engine = LLMSummarizer(self.llm, "answer", num_words=self.words, temperature=0.5, seed=sample,
                                   max_tokens=ESTIMATION_ANSWER_TOKENS)
        else:
            engine = ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=self.words))
        from citesum.pipeline import Pipeline, PipelineOptions

        options = PipelineOptions(retriever=self.retriever, budget=budget, order=self.order)  # type: ignore[arg-type]
        summary = Pipeline(_opened(self.index_dir), options, summarizer=engine).summarize(
            self.queries[int(example)]).summary
        return strip_citations(summary.raw_output or " ".join(b.text for b in summary.bullets))


@functools.lru_cache(maxsize=4)
def _opened(index_dir: str) -> Index:
    return Index.open(index_dir)


def panel_candidates_of(prompts: Mapping[str, str], panel: Sequence[LLM], *, samples: int = 3,
                        executor: BatchExecutor | None = None) -> dict[str, list[str]]:
    """:func:`panel_candidates` of each example's prompt, the examples spread over ``executor``'s workers
    (default: one after the other here; the panel's backends travel by pickling, their response cache with
    them, so a run interrupted half-way and run again asks only what it had not)."""
    examples = list(prompts)
    answers = (executor or InProcess()).map(
        functools.partial(panel_candidates, panel=panel, samples=samples), [prompts[e] for e in examples])
    return dict(zip(examples, answers))


def estimate_for_index(queries: Sequence[str], index_dir: str, panel: Sequence[LLM], budgets: Sequence[int], *,
                       window: int, fraction: float = 0.25, seed: int = 0, samples: int = 3,
                       retriever: str = "hybrid", order: str = "original", words: int = 250,
                       llm: LLM | None = None, fixed: Mapping[str, int] | None = None,
                       executor: BatchExecutor | None = None) -> tuple[BudgetEstimate, list[ScoredBudget]]:
    """The whole estimate for ``queries`` over the index at ``index_dir`` (``citesum estimate-budget``): the
    panel writes candidates from the full context (the collection cut to what its ``window`` holds beside each
    prompt), the pipeline (extractive, or ``llm``'s answers) runs at each of ``budgets``, and, with ``fixed``
    (label -> budget), those budgets and the full context are scored on the same silver references."""
    from citesum.pack import pack_full
    from citesum.summarize import fit_budget
    from citesum.summarize.prompts import get_template
    from citesum.tokens import get_tokenizer

    index = Index.open(index_dir)
    tokenizer = get_tokenizer(index.settings.tokenizer)
    answer = get_template("answer")
    documents = list(index.documents())
    prompts, rooms = {}, []
    for example in sample_examples([str(i) for i in range(len(queries))], fraction, seed):
        query = queries[int(example)]
        rooms.append(fit_budget(window, window,
                                tokenizer.count(answer.render(context="", query=query, num_words=words)),
                                ESTIMATION_ANSWER_TOKENS))
        prompts[example] = answer.render(context=pack_full(documents, rooms[-1], tokenizer).render(), query=query,
                                         num_words=words)
    runs = 1 if llm is None else samples  # the extractive summarizer is deterministic
    run = IndexPipelineRun(str(index.path.resolve()), tuple(queries), retriever, order, words, llm)
    answers = panel_candidates_of(prompts, panel, samples=samples, executor=executor)
    candidates = {example: [strip_citations(t) for t in texts] for example, texts in answers.items()}
    if empty := [e for e, texts in candidates.items() if not texts]:
        raise ConfigError(f"the panel wrote nothing for the query '{queries[int(empty[0])]}'")
    result = estimate_budget(candidates, run, budgets, samples=runs, fraction=1.0, executor=executor)
    if not fixed:
        return result, []
    # the full context as the panel read it: the whole collection cut to the room every sampled prompt has
    from dataclasses import replace

    return result, score_baselines(result, fixed, run, full_context=(replace(run, order="full"), min(rooms)),
                                   samples=runs, executor=executor)


__all__ = ["PAPER_BUDGETS", "ROUGE_UTILITY", "BudgetEstimate", "IndexPipelineRun", "estimate_for_index", "ScoredBudget", "Utility",
           "estimate_budget", "mbr_select", "panel_candidates", "panel_candidates_of", "rouge_utility",
           "sample_examples", "score_baselines", "score_budgets"]
