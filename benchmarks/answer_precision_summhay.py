"""Answer precision on the SummHay news haystacks (issue 44): the share of a summary's bullets that state an
insight of the subtopic asked, against those stating another subtopic's insight (``other``) or none (``none``).

Labels come from :func:`citesum.evaluate.answers.label_bullets` with the judge ``citesum eval summhay`` uses by
default (``offline``: MiniLM token recall + keyword recall, its shipped PARTIAL threshold). A bullet is a
bullet line of the summary (:func:`citesum.summarize.citations.bullet_lines`: a model's preamble such as "Here
is a summary of ..." is no bullet).

1. The stored systems of the data set (every ``summary_subtopic_*`` key, 78 per subtopic): answer precision
   pooled over their bullets, per haystack and overall, and beside it the share of bullets the stored GPT-4o
   judgments link to an insight of the asked subtopic (FULL or PARTIAL; that judge links one bullet per
   insight, so it is a lower bound of the ``asked`` share by its own standard, and it cannot see ``other``).
2. The offline default pipeline as ``citesum summarize QUERY --index DIR`` answers with no option
   (:func:`pipeline_summaries`: the CLI's defaults read from the command itself: hybrid retrieval, 15,000
   tokens, original order, the extractive summarizer with 5 bullets and 250 words, the index's tokenizer, no
   citation repair), on each haystack's index built as ``summhay_baselines.py`` builds it (whole documents,
   ``--cache`` shared with it): its labels, and its SummHay coverage / citation / joint by the same judge.

:func:`run_pipeline` is the reusable part: call it with other summarizer options (``summarizer_options``,
given to :func:`citesum.summarize.summarizer_for`) to measure a changed summarizer the same way.

3. The same pipeline with at most as many bullets as the subtopic has insights (SummHay's protocol, which the
   joint of ``summhay_baselines.py`` uses).

Run: python benchmarks/answer_precision_summhay.py [--cache DIR] [--judge offline] [--no-stored | --stored-from FILE]
     [--out NAME]
Writes: benchmarks/results/answer_precision_summhay.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, document_index_folders, git_state, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.answers import ANSWER_LABELS, label_bullets  # noqa: E402
from citesum.evaluate.judges import Judge, get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, haystack_index, judge_summaries, summary_lines  # noqa: E402
from citesum.evaluate.summhay import STORED_LABELS, system_label  # noqa: E402
from citesum.summarize.citations import bullet_lines  # noqa: E402

if TYPE_CHECKING:
    from citesum.datasets.summhay import Haystack

#: the CLI options of ``citesum summarize`` that shape the offline default answer, by their parameter names
PIPELINE_OPTIONS = ("retriever", "budget", "order", "stop_at_first_overflow", "top_k", "tokenizer")
SUMMARIZER_OPTIONS = ("bullets", "words", "relevance_embedder")
#: one system's summaries: per haystack, subtopic id -> summary lines
Summaries = list[dict[str, list[str]]]


def cli_defaults() -> dict[str, Any]:
    """The defaults of ``citesum summarize``, read from the command (they follow any change to the CLI)."""
    import click

    from citesum.cli.summarizing import summarize

    context = click.Context(summarize)
    defaults = {p.name: p.get_default(context) for p in summarize.params}
    path = {"summarizer": "extractive", "repair_citations": None, "verify_citations": False, "summary_dir": None,
            "rank_model": None, "rank_url": None}
    if changed := {k: defaults[k] for k, v in path.items() if defaults[k] != v}:
        raise SystemExit(f"citesum summarize's defaults take another code path now ({changed}): update this script")
    return {name: defaults[name] for name in (*PIPELINE_OPTIONS, *SUMMARIZER_OPTIONS)}


class _CachedEncoder:
    """The judge's embedder, remembering the last ``size`` texts it encoded: a summary is judged against each
    subtopic's insights in turn, so its bullets (and every insight) would be encoded again and again. Only the
    work is saved; the judge's scores are computed as before."""

    def __init__(self, embedder: Any, size: int = 4096) -> None:
        from collections import OrderedDict

        self._embedder, self._size = embedder, size
        self._cache: OrderedDict[str, tuple[Any, Any]] = OrderedDict()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[Any, list[Any]]:
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            sentences, pieces = self._embedder.encode_with_tokens(missing)
            for k, text in enumerate(missing):
                self._cache[text] = (sentences[k], pieces[k])
        for text in texts:
            self._cache.move_to_end(text)
        found = [self._cache[t] for t in texts]
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return (np.vstack([s for s, _ in found]) if found else np.zeros((0, self._embedder.dim), dtype=np.float32),
                [p for _, p in found])


def cached(judge: Judge) -> Judge:
    """``judge`` with its embedder (if it has one) behind :class:`_CachedEncoder`."""
    if hasattr(judge, "embedder"):
        judge.embedder = _CachedEncoder(judge.embedder)  # type: ignore[attr-defined]
    return judge


def pipeline_summaries(haystacks: Sequence["Haystack"], index_folders: Sequence[Path],
                       summarizer_options: Mapping[str, Any] | None = None, protocol: bool = False,
                       **pipeline_options: Any) -> Summaries:
    """Each subtopic's query answered as ``citesum summarize`` with no option answers it (the same
    :class:`citesum.pipeline.Pipeline`; ``summarizer_options`` and ``pipeline_options`` override the CLI's
    defaults), on each haystack's document index (built in its folder, or reopened). Lines ``- text [n]``, n the
    haystack position. With ``protocol``, at most as many bullets as the subtopic has insights (SummHay's
    protocol) instead of the CLI's bullet count. The summarizer (``summarizer_for`` with the options) is given to
    the pipeline as an object; the pipeline's options keep the CLI's extractive path: no citation check or
    repair."""
    from citesum.pipeline import Pipeline, PipelineOptions
    from citesum.summarize import summarizer_for

    defaults = cli_defaults()
    unknown = set(pipeline_options) - set(PIPELINE_OPTIONS)
    if unknown:
        raise TypeError(f"unknown pipeline options {sorted(unknown)}; known: {PIPELINE_OPTIONS}")
    options = PipelineOptions(**{**defaults, **pipeline_options})  # type: ignore[arg-type]
    engine_options = {**{k: defaults[k] for k in SUMMARIZER_OPTIONS}, **(summarizer_options or {})}
    engine = summarizer_for(None, **engine_options)
    out = []
    for haystack, folder in zip(haystacks, index_folders, strict=True):
        index = haystack_index(haystack, folder, PipelineConfig())  # as summhay_baselines.py builds it
        pipeline = Pipeline(index, options, summarizer=engine)
        answers = {}
        for s in haystack.subtopics:
            if protocol:
                pipeline = Pipeline(index, options, summarizer=summarizer_for(
                    None, **{**engine_options, "bullets": len(s.insights)}))
            answers[s.id] = summary_lines(haystack, pipeline.summarize(s.query).summary)
        out.append(answers)
    return out


def label_system(haystacks: Sequence["Haystack"], summaries: Summaries, judge: Judge) -> list[dict[str, Any]]:
    """One record per bullet of one system: haystack, subtopic asked, query, bullet, label, insight stated."""
    records = []
    for name, haystack, by_subtopic in zip(HAYSTACKS, haystacks, summaries, strict=True):
        insights = {s.id: [(i.id, i.text) for i in s.insights] for s in haystack.subtopics}
        for subtopic in haystack.subtopics:
            bullets = bullet_lines("\n".join(by_subtopic[subtopic.id]))
            labels = label_bullets(bullets, insights, subtopic.id, judge)
            for bullet, label in zip(bullets, labels.bullets):
                records.append({"haystack": name, "subtopic": subtopic.id, "query": subtopic.query,
                                "bullet": bullet, "label": label.label, "insight": label.insight,
                                "subtopics": list(label.subtopics)})
    return records


def shares(records: Sequence[Mapping[str, Any]], answers: int) -> dict[str, Any]:
    """Pooled shares of the labels, the mean answer precision per answer, and bullets per answer."""
    counts = Counter(r["label"] for r in records)
    per_answer: dict[tuple[str, str], list[bool]] = {}
    for r in records:
        per_answer.setdefault((r["haystack"], r["subtopic"]), []).append(r["label"] == "asked")
    precisions = [sum(v) / len(v) for v in per_answer.values()] + [0.0] * (answers - len(per_answer))
    return {**{label: round(counts[label] / len(records), 3) if records else 0.0 for label in ANSWER_LABELS},
            "mean_precision_per_answer": round(sum(precisions) / answers, 3) if answers else 0.0,
            "bullets": len(records), "answers": answers,
            "bullets_per_answer": round(len(records) / answers, 2) if answers else 0.0,
            "answers_without_bullets": answers - len(per_answer)}


def report(haystacks: Sequence["Haystack"], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`shares` overall and per haystack."""
    answers = {name: len(h.subtopics) for name, h in zip(HAYSTACKS, haystacks)}
    return {"overall": shares(records, sum(answers.values())),
            "per_haystack": {name: shares([r for r in records if r["haystack"] == name], count)
                             for name, count in answers.items()}}


def stored_linked_share(haystacks: Sequence["Haystack"], system: str) -> float:
    """Share of a stored system's bullets that the stored GPT-4o judgments link to an asked insight."""
    linked = bullets = 0
    for haystack in haystacks:
        for subtopic in haystack.subtopics:
            lines = subtopic.summaries[system]
            bullets += len(bullet_lines("\n".join(lines)))
            linked += len({j["bullet_id"] for j in subtopic.eval_summaries.get(system, [])
                           if STORED_LABELS[j["coverage"]] != "NO" and j.get("bullet_id")})
    return round(linked / bullets, 3) if bullets else 0.0


def run_pipeline(haystacks: Sequence["Haystack"], index_folders: Sequence[Path], judge: Judge,
                 summarizer_options: Mapping[str, Any] | None = None, protocol: bool = False,
                 **pipeline_options: Any) -> dict[str, Any]:
    """The pipeline's answers, their labels (shares overall and per haystack), and their SummHay scores by
    ``judge``; reusable after a summarizer change (``summarizer_options``: :func:`summarizer_for`'s)."""
    started = time.perf_counter()
    summaries = pipeline_summaries(haystacks, index_folders, summarizer_options, protocol, **pipeline_options)
    summarize_seconds = time.perf_counter() - started
    records = label_system(haystacks, summaries, judge)
    pooled, _ = judge_summaries(haystacks, summaries, judge)
    return {"options": {**cli_defaults(), **pipeline_options, **(summarizer_options or {})},
            **report(haystacks, records),
            "summhay": {"pooled": pooled.as_dict(), "per_haystack": {
                name: judge_summaries([h], [s], judge)[0].as_dict()
                for name, h, s in zip(HAYSTACKS, haystacks, summaries)}},
            "seconds": {"summarize": round(summarize_seconds, 1),
                        "label_and_score": round(time.perf_counter() - started - summarize_seconds, 1)},
            "bullets": records}


def examples(records: Sequence[Mapping[str, Any]], label: str, count: int = 5) -> list[dict[str, Any]]:
    """``count`` bullets with ``label``, taken in turn from each haystack (deterministic)."""
    by_haystack = [[r for r in records if r["label"] == label and r["haystack"] == name] for name in HAYSTACKS]
    out: list[dict[str, Any]] = []
    for k in range(max(map(len, by_haystack), default=0)):
        out.extend(rows[k] for rows in by_haystack if k < len(rows))
    return [{key: r[key] for key in ("haystack", "query", "bullet", "insight", "subtopics")} for r in out[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="offline", help="coverage judge (default: citesum eval summhay's)")
    parser.add_argument("--cache", default=None, help="keep the haystack indexes here (shared with summhay_baselines)")
    parser.add_argument("--no-stored", action="store_true", help="skip the stored systems")
    parser.add_argument("--stored-from", type=Path, default=None,
                        help="take the stored systems' labels from this earlier result (they depend on the data and "
                             "the judge only)")
    parser.add_argument("--out", default="answer_precision_summhay",
                        help="result name (benchmarks/results/NAME.json); the run on the code a change started "
                             "from is written as answer_precision_summhay_before")
    args = parser.parse_args()
    started = time.perf_counter()
    judge = cached(get_judge(args.judge))
    haystacks = news_haystacks()
    with tempfile.TemporaryDirectory() as temporary:
        folders = document_index_folders(args.cache or temporary)
        pipeline = run_pipeline(haystacks, folders, judge)
        protocol = run_pipeline(haystacks, folders, judge, protocol=True)
    for label, run in (("CLI defaults", pipeline), ("one bullet per insight at most", protocol)):
        overall = run["overall"]
        print(f"offline default pipeline, {label}: asked/other/none {overall['asked']}/{overall['other']}/"
              f"{overall['none']}, {overall['bullets_per_answer']} bullets per answer, SummHay "
              f"{run['summhay']['pooled']}, {run['seconds']}", flush=True)
    stored: dict[str, Any] = {}
    stored_started = time.perf_counter()
    if args.stored_from is not None:
        earlier = json.loads(args.stored_from.read_text(encoding="utf-8"))
        if earlier.get("judge") != judge.name:
            raise SystemExit(f"{args.stored_from} was labelled by the judge {earlier.get('judge')!r}, not {judge.name!r}")
        stored = earlier["stored"]
    elif not args.no_stored:
        systems = sorted(set.intersection(*(set(s.summaries) for h in haystacks for s in h.subtopics)))
        for system in systems:
            by_haystack = [{s.id: list(s.summaries[system]) for s in h.subtopics} for h in haystacks]
            retriever, model = system_label(system)
            result = report(haystacks, label_system(haystacks, by_haystack, judge))
            stored[system] = {"retriever": retriever, "model": model, **result,
                              "stored_gpt4o_linked_share": stored_linked_share(haystacks, system)}
            o = result["overall"]
            print(f"{system:55s} asked {o['asked']:.3f} other {o['other']:.3f} none {o['none']:.3f} "
                  f"(per answer {o['mean_precision_per_answer']:.3f}; GPT-4o-linked "
                  f"{stored[system]['stored_gpt4o_linked_share']:.3f}) {o['bullets_per_answer']} bullets/answer",
                  flush=True)
    stored_seconds = time.perf_counter() - stored_started
    write_result(args.out, {
        "command": " ".join(["python", *sys.argv]), "git": git_state(),
        "nproc": len(os.sched_getaffinity(0)), "judge": judge.name,
        "haystacks": HAYSTACKS, "seconds": {"total": round(time.perf_counter() - started, 1),
                                            "stored_systems": round(stored_seconds, 1)},
        "pipeline": {**pipeline, "examples": {"other": examples(pipeline["bullets"], "other"),
                                              "none": examples(pipeline["bullets"], "none")}},
        "pipeline_protocol": protocol,
        "stored_system_keys": sorted(stored), "stored": stored})


if __name__ == "__main__":
    main()
