"""Citation repair on every stored SummHay system: citation F1 and joint before and after, with the stored
GPT-4o coverage judgments (which bullet covers which insight) held fixed, so that only citations change.

Each non-empty summary line is repaired against its whole haystack (100 documents) and rewritten with the
repaired citations as 1-based document positions, then scored with the paper's protocol. For the RAG systems
(a stored retriever in the key) repair is also measured as `summarize` does it: against only the documents the
summarizer saw (the retriever's documents in score order within 15,000 cl100k tokens).

Run: python benchmarks/citation_repair.py [--mix 0.7] [--relative-threshold 0.7]
Writes: benchmarks/results/citation_repair.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import news_haystacks, write_result  # noqa: E402

from citesum.evaluate.summhay import (  # noqa: E402
    aggregate, gold_positions, score_insights, score_stored, stored_judgments, stored_systems, system_label,
)
from citesum.summarize.verify import (  # noqa: E402
    DEFAULT_MIN_SUPPORT, DEFAULT_MIX, DEFAULT_RELATIVE_THRESHOLD, CitationVerifier,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mix", type=float, default=DEFAULT_MIX)
    parser.add_argument("--relative-threshold", type=float, default=DEFAULT_RELATIVE_THRESHOLD)
    parser.add_argument("--min-support", type=float, default=DEFAULT_MIN_SUPPORT)
    args = parser.parse_args()
    haystacks = news_haystacks()
    systems = stored_systems(haystacks)
    build_seconds, repair_seconds, lines_repaired = [], [], 0
    repaired: dict[str, list] = {s: [] for s in systems}
    for haystack in haystacks:
        started = time.perf_counter()
        verifier = CitationVerifier(haystack.documents, mix=args.mix, relative_threshold=args.relative_threshold,
                                    min_support=args.min_support)
        build_seconds.append(time.perf_counter() - started)
        position = haystack.citation_numbers
        for subtopic in haystack.subtopics:
            gold = gold_positions(haystack, subtopic)
            for system in systems:
                started = time.perf_counter()
                lines = _repaired_lines(verifier, list(subtopic.summaries[system]), position)
                repair_seconds.append(time.perf_counter() - started)
                lines_repaired += sum(1 for line in lines if len(line.split()) >= 3)
                repaired[system].extend(score_insights(lines, stored_judgments(subtopic, system), gold))
    in_context = _context_scoped(haystacks, systems, args)
    rows = []
    for system in systems:
        before, _ = score_stored(haystacks, system)
        after = aggregate(repaired[system])
        retriever, model = system_label(system)
        rows.append({"system": system, "retriever": retriever, "model": model,
                     "before": before.as_dict(), "after": after.as_dict(),
                     **({"after_context_only": aggregate(in_context[system]).as_dict()} if system in in_context else {})})
    rows.sort(key=lambda r: -r["after"]["joint"])
    improved = sum(1 for r in rows if r["after"]["joint"] > r["before"]["joint"])
    scoped = [r for r in rows if "after_context_only" in r]
    summary = {
        "systems": len(rows), "improved_joint": improved,
        "rag_systems": len(scoped),
        "rag_improved_joint_context_only": sum(1 for r in scoped if r["after_context_only"]["joint"] > r["before"]["joint"]),
        "rag_mean_joint_before": round(float(np.mean([r["before"]["joint"] for r in scoped])), 1),
        "rag_mean_joint_after_context_only": round(float(np.mean([r["after_context_only"]["joint"] for r in scoped])), 1),
        "mean_joint_before": round(float(np.mean([r["before"]["joint"] for r in rows])), 1),
        "mean_joint_after": round(float(np.mean([r["after"]["joint"] for r in rows])), 1),
        "mean_citation_before": round(float(np.mean([r["before"]["citation"] for r in rows])), 1),
        "mean_citation_after": round(float(np.mean([r["after"]["citation"] for r in rows])), 1),
        "evidence_index_build_s_per_haystack": [round(s, 2) for s in build_seconds],
        "repair_s_per_summary_p50": round(float(np.percentile(repair_seconds, 50)), 4),
        "repair_s_per_summary_p95": round(float(np.percentile(repair_seconds, 95)), 4),
        "lines_repaired": lines_repaired,
    }
    print(summary)
    for row in rows:
        if row["system"] in ("summary_subtopic_gpt-4o", "summary_subtopic_oracle_gemini-1.5-pro"):
            print(row)
    write_result("citation_repair", {"mix": args.mix, "relative_threshold": args.relative_threshold,
                                     "min_support": args.min_support,
                                     "summary": summary, "rows": rows})


def _repaired_lines(verifier: CitationVerifier, lines: list[str], position: dict[str, int]) -> list[str]:
    """Each statement line rewritten with its repaired citations (1-based haystack positions)."""
    out = []
    for line in lines:
        if len(line.split()) < 3:
            out.append(line)
            continue
        result = verifier.verify(line, [])
        out.append(result.text + " " + "".join(f"[{position[d]}]" for d in result.citations))
    return out


def _context_scoped(haystacks, systems, args):  # type: ignore[no-untyped-def]
    """Repair each RAG system against the documents its summarizer saw (stored retriever, 15K tokens)."""
    from citesum.evaluate.retrieval import select_within_budget
    from citesum.tokens import get_tokenizer

    tokenizer = get_tokenizer()
    out: dict[str, list] = {}
    for haystack in haystacks:
        tokens = {d.id: tokenizer.count(d.text) for d in haystack.documents}
        position = haystack.citation_numbers
        by_id = {d.id: d for d in haystack.documents}
        for subtopic in haystack.subtopics:
            gold = gold_positions(haystack, subtopic)
            verifiers: dict[str, CitationVerifier] = {}
            for system in systems:
                retriever, _ = system_label(system)
                if retriever not in subtopic.retriever_scores:
                    continue
                if retriever not in verifiers:
                    scores = {d: s for d, s in subtopic.retriever_scores[retriever].items() if d in tokens}
                    seen = select_within_budget(sorted(scores, key=lambda d: -scores[d]), tokens.__getitem__, 15_000)
                    verifiers[retriever] = CitationVerifier(
                        [by_id[d] for d in seen], mix=args.mix, relative_threshold=args.relative_threshold,
                        min_support=args.min_support)
                lines = _repaired_lines(verifiers[retriever], list(subtopic.summaries[system]), position)
                out.setdefault(system, []).extend(score_insights(lines, stored_judgments(subtopic, system), gold))
    return out


if __name__ == "__main__":
    main()
