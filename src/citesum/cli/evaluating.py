"""``citesum eval summhay | position | judge | retrieval``: the papers' evaluation protocols."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from citesum.cli.common import (
    base_url_option,
    echo_json,
    echo_table,
    openai_llm,
    ray_executor,
    ray_options,
)
from citesum.defaults import DEFAULT_BUDGET
from citesum.errors import CitesumError

def _summarizer_factory(summarizer: str, model: str | None, base_url: Sequence[str],
                        max_tokens: int = 1024) -> Callable[[int], Any]:
    """Bullets -> summarizer, for the SummHay runs (one bullet per insight)."""
    from citesum.evaluate.runner import extractive_factory

    if summarizer == "extractive":
        return extractive_factory
    from citesum.summarize.llm import LLMSummarizer

    llm = openai_llm(model, base_url)
    if llm is None:
        raise CitesumError("--summarizer llm needs --summarizer-model (and --summarizer-base-url)")
    return lambda bullets: LLMSummarizer(llm, "summhay", bullets=bullets, max_tokens=max_tokens)


def _judge_columns(judge: Any) -> dict[str, Any]:
    """A report's columns for its judge: the name and, for an LLM judge, how many replies it could not read
    (counted as NO coverage), with a warning that shows the first one."""
    from citesum.evaluate.llm_judge import LLMJudge

    return _judge_report(judge.name, judge.unparsed if isinstance(judge, LLMJudge) else None)


def _judge_report(name: str, unparsed: list[str] | None, of: str = "") -> dict[str, Any]:
    """:func:`_judge_columns` from the judge's name and its unread replies (None: a judge that reads none)."""
    if unparsed is None:
        return {"judge": name}
    if unparsed:
        click.echo(f"warning: {of}{len(unparsed)} judge replies were not the expected JSON after retrying and "
                   f"count as NO coverage; first: {unparsed[0]}", err=True)
    return {"judge": name, "unparsed_judge_replies": len(unparsed)}


def _repair_and_label(summarizer: str, model: str | None, repair_citations: bool | None) -> tuple[bool, str]:
    """Whether a SummHay run repairs citations and its label in reports."""
    from citesum.pipeline import repair_by_default

    repair = repair_by_default(summarizer, repair_citations)
    return repair, (model if summarizer == "llm" else "extractive") + (" + repair" if repair else "")


@click.group(name="eval")
def eval_group() -> None:
    """Evaluate summaries and retrieval with the papers' protocols."""


@eval_group.command(name="summhay")
@click.option("--haystack", "haystack_files", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A SummHay topic_*.json (repeatable; scores are pooled over all insights).")
@click.option("--system", "systems", multiple=True,
              help="Stored system key(s), e.g. summary_subtopic_rerank3_gpt-4o, or systems of --summaries "
                   "(default: every one).")
@click.option("--retriever", "retrievers", multiple=True,
              help="Run OUR pipeline with this retriever (instead of scoring stored summaries) and judge it; "
                   "repeat it (and --budget) for a sweep: one row per retriever and budget.")
@click.option("--summaries", "summary_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Judge the summaries in this file with --judge: a SummHay topic file with subtopic "
                   "'summaries', or JSON {system: {subtopic_id: lines or text}} or {subtopic_id: lines or text}; "
                   "citations [n] are haystack positions (repeatable).")
@click.option("--budget", "budgets", type=click.IntRange(min=1), multiple=True, default=[DEFAULT_BUDGET], show_default=True,
              help="Context budget of the pipeline runs (repeatable).")
@click.option("--order", type=click.Choice(["original", "score", "full"]), default="original", show_default=True)
@click.option("--unit", type=click.Choice(["document", "passage"]), default="document", show_default=True)
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default="extractive", show_default=True)
@click.option("--summarizer-model", default=None, help="OpenAI-compatible model for --summarizer llm.")
@base_url_option("--summarizer-base-url", "the summarizer's model")
@click.option("--summarizer-max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Answer tokens of the LLM summarizer.")
@click.option("--repair-citations/--no-repair-citations", default=None,
              help="Repair citations against the context (default: on for --summarizer llm).")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="Judge for pipeline runs: offline, offline:<embedder>, lexical, llm (with --model/--base-url).")
@click.option("--model", default=None, help="LLM judge model (OpenAI-compatible).")
@base_url_option(of="the judge's model")
@click.option("--index-dir", default=None, type=click.Path(file_okay=False),
              help="Keep the haystack indexes here (reused when unchanged).")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write every per-insight decision to this JSON file.")
@ray_options("Spread the pipeline runs of a sweep, one per retriever and budget,")
@click.option("--json", "as_json", is_flag=True)
def eval_summhay(haystack_files: Sequence[str], systems: Sequence[str], retrievers: Sequence[str],
                 summary_files: Sequence[str], budgets: Sequence[int],
                 order: str, unit: str, summarizer: str, summarizer_model: str | None,
                 summarizer_base_url: Sequence[str], summarizer_max_tokens: int, repair_citations: bool | None,
                 judge_name: str, model: str | None, base_url: Sequence[str], index_dir: str | None,
                 report: str | None, use_ray: bool, ray_address: str | None, as_json: bool) -> None:
    """SummHay coverage / citation / joint (paper protocol). By default: the stored summaries with their stored
    GPT-4o judgments. With --retriever: our pipeline (bullets = number of insights), judged by --judge, for
    every retriever and budget given (with --index-dir, a sweep interrupted half-way and run again does only the
    runs left). With --summaries: the summaries in those files, judged by --judge."""
    from citesum.datasets.summhay import load_haystack

    if retrievers and summary_files:
        raise CitesumError("--retriever runs our pipeline and --summaries judges given summaries: use one of them")
    if use_ray and not retrievers:
        raise CitesumError("--ray spreads the runs of our pipeline (--retriever); scoring stored or given summaries "
                           "runs here")
    if ray_address and not index_dir:
        raise CitesumError("--ray-address: the cluster's workers open the haystack indexes by path; give "
                           "--index-dir, a folder every node shares")
    if summary_files:
        judge = _judge_of(judge_name, model, base_url)
        rows, decisions = _given_rows([load_haystack(f) for f in haystack_files], summary_files, systems, judge)
    elif retrievers:
        from citesum.evaluate.runner import PipelineConfig, sweep_haystack_files

        repair, label = _repair_and_label(summarizer, summarizer_model, repair_citations)
        with ray_executor(use_ray, ray_address) as executor:
            points = sweep_haystack_files(
                haystack_files, [PipelineConfig(retriever=r, budget=b, order=order, unit=unit)
                                 for r in retrievers for b in budgets],
                _summarizer_factory(summarizer, summarizer_model, summarizer_base_url, summarizer_max_tokens),
                label=label, repair_citations=repair, judge_name=judge_name, judge_llm=openai_llm(model, base_url),
                index_dir=index_dir, executor=executor,
                run_key=(summarizer_max_tokens, list(summarizer_base_url), judge_name, model, list(base_url)))
        rows, decisions = _sweep_rows(points, order, label)
    else:
        rows, decisions = _stored_rows([load_haystack(f) for f in haystack_files], systems)
    rows.sort(key=lambda r: -r["joint"])
    if report:
        Path(report).write_text(json.dumps({"haystacks": list(haystack_files), "systems": rows,
                                            "insights": decisions}, indent=1), encoding="utf-8")
    if as_json:
        echo_json(rows)
        return
    echo_table(["retriever", "model", "judge", "coverage", "citation", "joint"],
               [[r["retriever"], r["model"], r["judge"], float(r["coverage"]), float(r["citation"]),
                 float(r["joint"])] for r in rows], f"{rows[0]['insights']} insights")


Rows = tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]


def _judge_of(judge_name: str, model: str | None, base_url: Sequence[str]) -> Any:
    from citesum.evaluate.judges import get_judge

    return get_judge(judge_name, llm=openai_llm(model, base_url))


def _given_rows(haystacks: Sequence[Any], summary_files: Sequence[str], systems: Sequence[str], judge: Any) -> Rows:
    """A row per system of the summaries in ``summary_files`` (all, or ``systems``), judged by ``judge``, and
    every insight's decision."""
    from dataclasses import asdict

    from citesum.evaluate.runner import judge_summaries, load_summaries
    from citesum.evaluate.summhay import system_label

    given = load_summaries(summary_files, haystacks)
    if unknown := [s for s in systems if s not in given]:
        raise CitesumError(f"no system {unknown[0]!r} in {', '.join(summary_files)}; it has "
                           f"{', '.join(sorted(given)[:5])}{' ...' if len(given) > 5 else ''}")
    rows, decisions = [], {}
    for system in systems or sorted(given):
        scores, insights = judge_summaries(haystacks, given[system], judge)
        retriever, model = system_label(system) if system.startswith("summary_subtopic_") else ("-", system)
        rows.append({"system": system, "retriever": retriever, "model": model, **scores.as_dict()})
        decisions[system] = [asdict(i) for i in insights]
    judge_columns = _judge_columns(judge)  # once: an LLM judge's unread replies are counted over the run
    return [{**row, **judge_columns} for row in rows], decisions


def _sweep_rows(points: Sequence[Any], order: str, label: str) -> Rows:
    """A row per run of our pipeline (retriever and budget), and every insight's decision."""
    from dataclasses import asdict

    rows, decisions = [], {}
    for point in points:
        config = point.config
        name = f"citesum:{config.retriever}:{order}:{config.budget}+{label}"
        rows.append({"system": name, "retriever": config.retriever, "budget": config.budget, "model": label,
                     **_judge_report(point.judge, point.unparsed, f"{name}: "), **point.scores.as_dict()})
        decisions[name] = [asdict(i) for i in point.insights]
    return rows, decisions


def _stored_rows(haystacks: Sequence[Any], systems: Sequence[str]) -> Rows:
    """A row per stored system (all, or ``systems``) with its stored GPT-4o judgments."""
    from dataclasses import asdict

    from citesum.evaluate.summhay import score_stored, stored_systems, system_label

    available = stored_systems(haystacks)
    if unknown := [s for s in systems if s not in available]:
        raise CitesumError(f"no stored summaries and judgments for {unknown[0]!r} in every haystack; "
                           f"{len(available)} systems are available, e.g. {', '.join(available[:3])}")
    rows, decisions = [], {}
    for system in systems or available:
        scores, insights = score_stored(haystacks, system)
        retriever, model = system_label(system)
        rows.append({"system": system, "retriever": retriever, "model": model, "judge": "stored GPT-4o",
                     **scores.as_dict()})
        decisions[system] = [asdict(i) for i in insights]
    return rows, decisions


@eval_group.command(name="position")
@click.option("--haystack", "haystack_files", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False))
@click.option("--model", "models", multiple=True, default=("claude3-opus", "gemini-1.5-pro", "gpt-4o"),
              show_default=True, help="Stored full-context runs to score (when --summarizer is not given).")
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default=None,
              help="Run the experiment with OUR summarizer instead of scoring the stored runs.")
@click.option("--summarizer-model", default=None, help="OpenAI-compatible model for --summarizer llm.")
@base_url_option("--summarizer-base-url", "the summarizer's model")
@click.option("--summarizer-max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Answer tokens of the LLM summarizer.")
@click.option("--budget", type=click.IntRange(min=1), default=120_000, show_default=True,
              help="Context tokens; over it every document is cut to a common length (placement is kept).")
@click.option("--tokenizer", "tokenizer_name", default="cl100k", show_default=True,
              help="Count the budget with the summarizer's tokenizer: cl100k or hf:<tokenizer.json>.")
@click.option("--repair-citations/--no-repair-citations", default=None,
              help="Repair citations against the context (default: on for --summarizer llm).")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="Judge for our runs: offline, offline:<embedder>, lexical, llm (with --judge-model/--judge-base-url).")
@click.option("--judge-model", default=None)
@base_url_option("--judge-base-url", "the judge's model")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write every per-insight decision of our run, per placement, to this JSON file.")
@click.option("--json", "as_json", is_flag=True)
def eval_position(haystack_files: Sequence[str], models: Sequence[str], summarizer: str | None,
                  summarizer_model: str | None, summarizer_base_url: Sequence[str], summarizer_max_tokens: int,
                  budget: int, tokenizer_name: str,
                  repair_citations: bool | None, judge_name: str, judge_model: str | None,
                  judge_base_url: Sequence[str], report: str | None, as_json: bool) -> None:
    """Position bias: the whole haystack as context with the relevant documents at the top / bottom / middle /
    in random order; sensitivity = largest |joint - joint(random)|. Without --summarizer: the stored runs with
    their stored judgments; with it: our summarizer, judged by --judge."""
    from citesum.datasets.summhay import load_haystack
    from citesum.evaluate.position import STORED_PLACEMENT_KEYS, sensitivity
    from citesum.evaluate.summhay import score_stored, stored_systems

    haystacks = [load_haystack(f) for f in haystack_files]
    rows = []
    if summarizer:
        from citesum.evaluate.judges import get_judge
        from citesum.evaluate.runner import position_experiment
        from citesum.tokens import get_tokenizer

        make_summarizer = _summarizer_factory(summarizer, summarizer_model, summarizer_base_url,
                                              summarizer_max_tokens)
        judge = get_judge(judge_name, llm=openai_llm(judge_model, judge_base_url))
        repair, label = _repair_and_label(summarizer, summarizer_model, repair_citations)
        result = position_experiment(haystacks, make_summarizer, judge, budget, get_tokenizer(tokenizer_name),
                                     repair_citations=repair)
        rows.append({"model": f"citesum {label} ({budget} tokens)", **_judge_columns(judge),
                     **{p: round(s.joint, 1) for p, s in result.scores.items()},
                     "sensitivity": round(result.sensitivity, 1)})
        if report:
            from dataclasses import asdict

            Path(report).write_text(json.dumps({
                "haystacks": list(haystack_files), "run": rows[0],
                "scores": {p: s.as_dict() for p, s in result.scores.items()},
                "insights": {p: [asdict(i) for i in decisions] for p, decisions in result.insights.items()},
            }, indent=1), encoding="utf-8")
    else:
        available = set(stored_systems(haystacks))
        for model in models:
            keys = {p: k.format(model=model) for p, k in STORED_PLACEMENT_KEYS.items()}
            if not set(keys.values()) <= available:
                raise CitesumError(f"the haystacks hold no position-bias runs for model '{model}'")
            joint = {p: score_stored(haystacks, key)[0].joint for p, key in keys.items()}
            rows.append({"model": model, "judge": "stored GPT-4o", **{p: round(v, 1) for p, v in joint.items()},
                         "sensitivity": round(sensitivity(joint), 1)})
    if as_json:
        echo_json(rows)
        return
    echo_table(["model", "judge", "top", "bottom", "middle", "random", "sensitivity"],
                [[r["model"], r["judge"], r["top"], r["bottom"], r["middle"], r["random"], r["sensitivity"]]
                 for r in rows])


@eval_group.command(name="judge")
@click.option("--annotations", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Human-annotated judge benchmark, e.g. summhay/eval_benchmark_dev.json.")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="offline, offline:<embedder>, lexical, or llm (with --model/--base-url).")
@click.option("--model", default=None)
@base_url_option(of="the judge's model")
@click.option("--json", "as_json", is_flag=True)
def eval_judge(annotations: str, judge_name: str, model: str | None, base_url: Sequence[str], as_json: bool) -> None:
    """Meta-evaluate a coverage judge against human labels (Pearson r, linking accuracy), beside the stored
    LLM judges, with 95% bootstrap intervals (resampling summaries) for each r and for our r minus theirs."""
    from citesum.evaluate.judges import get_judge
    from citesum.evaluate.meta import (
        by_subtopic, judgments_by_summary, label_values, load_annotations, pearson_interval, quality_with_interval,
        stored_judge_names,
    )

    samples = load_annotations(annotations)
    judge = get_judge(judge_name, llm=openai_llm(model, base_url))
    # before _judge_columns: it reports the replies this run left unread
    ours = by_subtopic(samples, judgments_by_summary(samples, judge))
    rows = []
    for name in stored_judge_names(samples):
        theirs = by_subtopic(samples, judgments_by_summary(samples, name))
        rows.append({"judge": name, **quality_with_interval(theirs),
                     "ours_minus_this_r_ci95": pearson_interval(label_values(ours, theirs))})
    rows.append({**_judge_columns(judge), **quality_with_interval(ours)})
    if as_json:
        echo_json(rows)
        return

    def interval(bounds: tuple[float, float] | None) -> str:
        return f"[{bounds[0]:+.3f}, {bounds[1]:+.3f}]" if bounds else "n/a (one subtopic)"

    echo_table(["judge", "Pearson r", "95% CI", "linking accuracy", "ours - this r (95% CI)"],
                [[r["judge"], f"{r['pearson']:.3f}", interval(r["pearson_ci95"]), f"{r['linking_accuracy']:.3f}",
                  interval(r["ours_minus_this_r_ci95"]) if "ours_minus_this_r_ci95" in r else ""] for r in rows],
                f"{rows[-1]['judgments']} insight judgments in {len(samples)} "
                f"{'summary' if len(samples) == 1 else 'summaries'}")
    if judge.name.startswith("offline") or judge.name == "lexical":
        click.echo("note: the offline judges' thresholds are fit on eval_benchmark_dev.json and the news haystacks' "
                   "stored GPT-4o labels, so on that file this row is in-sample; leave-one-domain-out numbers: "
                   "benchmarks/results/offline_judge.json", err=True)


@eval_group.command(name="retrieval")
@click.option("--beir", "beir_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) whose corpus --index holds "
                   "(citesum index DIR --dataset beir --index IX).")
@click.option("--split", default=None, help="The qrels split (default: test, or the folder's only one).")
@click.option("--index", "index_dir", required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--retriever", "retrievers", multiple=True, default=("bm25", "dense", "hybrid"), show_default=True,
              help="Retriever(s) to rank documents with (repeatable).")
@click.option("--summary-index", "summary_dir", default=None, type=click.Path(exists=True, file_okay=False),
              help="Also rank by this summary index (Summary RAG, citesum summary-index), with each retriever.")
@click.option("--json", "as_json", is_flag=True, help="Means and per-query scores as JSON.")
def eval_retrieval(beir_dir: str, split: str | None, index_dir: str, retrievers: Sequence[str],
                   summary_dir: str | None, as_json: bool) -> None:
    """BEIR's NDCG@10, NDCG@100 and Recall@100 of document rankings (a document scores by its best units, as
    search --documents ranks them)."""
    from citesum.datasets.beir import load_beir
    from citesum.evaluate.retrieval import BEIR_METRICS, evaluate_retrievers
    from citesum.index.store import Index
    from citesum.summary_rag import summaries_for

    dataset = load_beir(beir_dir, split)
    content = Index.open(index_dir)
    reports = evaluate_retrievers(dataset.queries, content, retrievers,
                                  summaries_for(content, summary_dir) if summary_dir else None)
    if reports[0].judged_documents_missing:
        click.echo(f"warning: {reports[0].judged_documents_missing} judged relevant document(s) of {dataset.name} "
                   f"are not in {index_dir}: no retriever finds them", err=True)
    if as_json:
        echo_json({"dataset": dataset.name, "index": index_dir, "reports": [dataclasses.asdict(r) for r in reports]})
        return
    echo_table(["ranker", "NDCG@10", "NDCG@100", "Recall@100", "ms / query"],
               [[r.ranker, *(f"{r.means[m]:.4f}" for m in BEIR_METRICS),
                 f"{r.median_ms:.1f}"] for r in reports],
               f"{dataset.name}, {reports[0].queries} queries")
