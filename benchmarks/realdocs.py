"""Real documents, real questions: cited answers over a folder of public documents of mixed formats.

The corpus (benchmarks/realdocs/corpus.json, gathered by benchmarks/realdocs/corpus.py, never committed) is
forty-four splits, each of other packages' documents: ``dev`` to tune on and ``test`` to report on, then a split
written for each later round of answer rules and held out from it, its questions unseen until the round's rules were
final: ``holdout``, ``fresh``, ``next``, ``sixth``, ``seventh``, ``eighth`` (the sixth round's), ``ninth`` and
``tenth`` (the seventh round's: ``ninth`` held out from its first rules, ``tenth`` from all of them), ``eleventh``
(written at the end of the seventh round for the eighth), ``twelfth`` (held out from the eighth round), ``thirteenth``
(held out from the ninth round), ``fourteenth`` (held out from the ninth round's end, written for the tenth),
``fifteenth`` (written at the end of the ninth round, held out until the tenth round's start), ``sixteenth`` (written
at the start of the tenth round, held out from it), ``seventeenth`` (written at the end of the tenth round, held out
until the eleventh round's start), ``eighteenth`` (written at the start of the eleventh round, held out from it),
``nineteenth`` (written at the start of the twelfth round, held out from it), ``twentieth`` (written at the end of the
twelfth round, held out until the thirteenth round's start), ``twenty-first`` (written at the start of the thirteenth
round, held out from it), ``twenty-second`` (written at the start of the fourteenth round, held out from it),
``twenty-third`` (written at the start of the fifteenth round, held out from it), ``twenty-fourth`` (written at the
end of the fifteenth round, held out until the sixteenth round's start), ``twenty-fifth`` (written at the start of the
sixteenth round, held out from it), ``twenty-sixth`` (written at the start of the seventeenth round, held out from
it), ``twenty-seventh`` (written at the end of the seventeenth round, held out until the eighteenth round's start),
``twenty-eighth`` (written at the start of the eighteenth round, held out from it), ``twenty-ninth`` (written at the
start of the nineteenth round, held out from it), ``thirtieth`` (written at the start of the twentieth round, held out
from it), ``thirty-first`` (written at the start of the twenty-first round, held out from it), ``thirty-second``
(written at the start of the twenty-second round, held out from it), ``thirty-third`` (written at the start of the
twenty-third round, held out from it), ``thirty-fourth`` (written at the start of the twenty-fourth round, held out
from it), ``thirty-fifth`` (written at the start of the twenty-fifth round, held out from it), ``thirty-sixth``
(written at the start of the twenty-sixth round, held out from it), ``thirty-seventh`` (written at the start of the
twenty-seventh round, held out from it), ``thirty-eighth`` (written at the start of the twenty-eighth round, held out
from it), ``thirty-ninth`` (written at the start of the twenty-ninth round, held out from it), ``fortieth`` (written
at the start of the thirtieth round, held out from it), ``forty-first`` (written at the start of the thirty-first
round, held out from it), ``forty-second`` (written at the start of the thirty-second round, held out from it),
``forty-third`` (written at the start of the thirty-third round, held out from it) and ``forty-fourth`` (written at
the start of the thirty-fourth round, held out from it).
``--split all`` runs dev and test; the others run only when named. Each split holds hard-wrapped plain text (Debian's
README, FAQ and spec files), HTML manuals with navigation bars (Texinfo, Sphinx, DocBook, latex2html, SQLite's site),
PDFs (TeX- and DocBook-made manuals, a scanned page with OCR) and Markdown; dev, test, fresh and next hold DOCX too,
eighth AsciiDoc, ninth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, twenty-first, twenty-second,
twenty-third, twenty-fourth, twenty-fifth, twenty-sixth, twenty-seventh, twenty-eighth, twenty-ninth, thirtieth,
thirty-first, thirty-second, thirty-third, thirty-fourth, thirty-fifth, thirty-sixth, thirty-seventh,
thirty-eighth, thirty-ninth, fortieth, forty-first, forty-second, forty-third and forty-fourth reStructuredText, and
tenth, eleventh, twelfth, thirteenth, fourteenth and fifteenth both. The questions
(benchmarks/realdocs/questions.json) were written from reading the documents: ``specific`` (one or two sentences
answer), ``broad`` (several sentences answer; every one of the split is listed) and ``unanswerable`` (no document of
the split answers). Gold sentences are verbatim from the text citesum extracts; a gold sentence that the index's
text does not hold stops the run (the extraction changed or mangles it).

A run gathers a split, builds an index with ``citesum index`` (one process), reads the documents' text back from
that index, then asks every question in a process of its own as a user would, with the defaults:
``citesum summarize QUESTION --index IX --json`` (plus any arguments given after ``--``). Measured, per split and
per kind of question:

* fragment rate: the share of bullets that are not a whole sentence of an indexed document: not found verbatim
  (whitespace aside), not starting where a sentence starts there (start of text, after . ! ? and a space, at a
  line start after a blank line, a line ending a sentence or a heading, or a list marker), not ending with
  . ! ? (a closing quote or bracket may follow; or a colon, when the bullet shows the code the sentence
  introduces), running from a heading (a short line and a blank line, or
  Sphinx's ¶) into the paragraph below, or holding navigation (Next:/Previous:/Up:) or stray list markers;
* answer precision (answerable questions): the share of bullets that match a gold or also-answers sentence of
  the question: token F1 >= 0.6 between lower-cased word sequences, or one held in the other (3+ words);
* answer coverage: the share of answerable questions whose answer states a gold sentence; specific gold rate:
  the same over specific questions; gold recall: the mean share of a question's gold sentences stated;
* citation correctness: the share of (bullet, cited document) pairs where the document's text holds the bullet
  or a sentence matching it (F1 >= 0.6);
* abstention: the share of unanswerable questions answered with no bullet (the JSON's ``abstained`` flag when it
  has one); false abstention: the same share over answerable questions; seconds per question (the process's
  wall time, start-up included).

Run:   python benchmarks/realdocs.py --split dev|test|holdout|fresh|next|sixth|seventh|eighth|ninth|tenth|eleventh|
                                               twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|
                                               eighteenth|nineteenth|twentieth|twenty-first|twenty-second|
                                               twenty-third|twenty-fourth|twenty-fifth|twenty-sixth|
                                               twenty-seventh|twenty-eighth|twenty-ninth|thirtieth|
                                               thirty-first|thirty-second|thirty-third|thirty-fourth|
                                               thirty-fifth|thirty-sixth|thirty-seventh|thirty-eighth|
                                               thirty-ninth|fortieth|forty-first|forty-second|
                                               forty-third|forty-fourth|all
                                       [--work DIR] [--out FILE]
                                       [-- SUMMARIZE ARGS...]
       python benchmarks/realdocs.py --split dev --check-only      (gather, index and check the gold only)
Writes: benchmarks/results/realdocs.json (a split run again replaces that split's entry, the others stay)
Unit tests of the metrics: python -m pytest benchmarks/realdocs/test_metrics.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import git_state, load_script  # noqa: E402
HERE = ROOT / "benchmarks" / "realdocs"
QUESTIONS = HERE / "questions.json"
KINDS = ("specific", "broad", "unanswerable")

# --- metrics: small pure functions ----------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_CLOSERS = "\"'”’)]}»"
_SENTENCE_END = re.compile(r"[.!?][" + re.escape(_CLOSERS) + r"]*$")
#: a line's list marker: - * + • ◦ ‣ ▪ – —, "1." "1)" "(a)", or a FAQ's "Q:" / "A:"
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*+•◦‣▪–—]|\d{1,3}[.)]|\(?[A-Za-z0-9]{1,3}\)|[QA]:)[ \t]+$")
_NAVIGATION = re.compile(r"\b(?:Next|Previous|Prev|Up):")
_STRAY_MARKER = re.compile(r"^\s*(?:[-*+•◦‣▪–—](?:\s|$)|[•◦‣▪])|-\s+-|\s[•◦‣▪]\s")
#: how a line that ends a sentence, a heading (Sphinx's ¶) or a navigation bar ("[Index]") may end
_LINE_CLOSES = tuple(".!?:;¶" + _CLOSERS + "*")
MATCH_F1 = 0.6
MIN_CONTAINED_WORDS = 3


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, ends stripped."""
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """The lower-cased word sequence of a text (letters, digits and underscores; punctuation dropped)."""
    return _WORD.findall(text.lower())


def token_f1(a: str, b: str) -> float:
    """Token-level F1 between the word multisets of two texts (0 when either has no word)."""
    wa, wb = Counter(words(a)), Counter(words(b))
    common = sum((wa & wb).values())
    if not common:
        return 0.0
    precision, recall = common / sum(wa.values()), common / sum(wb.values())
    return 2 * precision * recall / (precision + recall)


def contained(a: str, b: str, min_words: int = MIN_CONTAINED_WORDS) -> bool:
    """True when the word sequence of one text appears, contiguous, in the other's, and the shorter one has at
    least ``min_words`` words (so that "zlib" is not "contained" in every sentence about zlib)."""
    wa, wb = words(a), words(b)
    short, long_ = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    if len(short) < min_words:
        return False
    return f" {' '.join(short)} " in f" {' '.join(long_)} "


def matches(a: str, b: str, threshold: float = MATCH_F1) -> bool:
    """Two texts state the same sentence: token F1 >= ``threshold``, or one contained in the other."""
    return token_f1(a, b) >= threshold or contained(a, b)


def has_navigation(text: str) -> bool:
    return bool(_NAVIGATION.search(text))


def has_stray_marker(text: str) -> bool:
    return bool(_STRAY_MARKER.search(text))


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text.rstrip()))


def _flexible(text: str) -> re.Pattern[str]:
    """A pattern finding ``text`` whatever the whitespace between its words."""
    return re.compile(r"\s+".join(re.escape(part) for part in text.split()))


#: an FAQ's label of a question or an answer after a sentence's end ("... Should I redo all? A: No, if you have
#: kept ..."), or opening its line ("SOLUTION: With Apache web server, ..."): the summarizer states the sentence
#: after an answer's label without it, as it does an item's without its marker (the benchmark runs any citesum
#: in its own process, and imports none: these are the answer labels of citesum.segment, written again)
_FAQ_LABEL_AFTER = re.compile(r"(?:^|\n[ \t]*|[.!?][" + re.escape(_CLOSERS) + r"]*\s+)"
                              r"(?:[QA]|Answer|ANSWER|Solution|SOLUTION|Resolution|RESOLUTION|Workaround|WORKAROUND):$")


def starts_sentence(text: str, start: int, first_char: str = "") -> bool:
    """Whether a sentence can start at ``text[start]``: at the start of the text; after . ! ? (and closing
    quotes or brackets) and whitespace, or after an FAQ's label ("Q:", "A:", "Answer:", "SOLUTION:") that follows
    them or opens its line; after a list marker opening its line; or at a line start after a blank line, after
    a line ending a sentence, a heading's ¶ or a bracket, or when it begins with a capital, a digit or an
    opening quote or bracket (a hard-wrapped sentence's next line starts in lower case)."""
    before = text[:start]
    core = before.rstrip()
    if not core:
        return True
    gap = before[len(core):]
    line_start = before.rfind("\n") + 1
    if _LIST_MARKER.fullmatch(before[line_start:]):
        return True  # "  - Item", "1. Item", "(3) Item"
    if not gap:
        return False
    if _SENTENCE_END.search(core) or _FAQ_LABEL_AFTER.search(core):
        return True
    if "\n" not in gap:
        return False
    if gap.count("\n") >= 2:
        return True  # a blank line: a new block
    first = first_char or text[start:start + 1]
    return core.endswith(_LINE_CLOSES) or first.isupper() or first.isdigit() or first in "\"'“‘([«"


_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CLAUSE_END = re.compile(r"[.!?:;,][" + re.escape(_CLOSERS) + r"]*$")
#: a text before a blank line with at most this many words and no closing punctuation is a heading
HEADING_WORDS = 12


def merges_heading(span: str) -> bool:
    """Whether a span of a document runs from a heading into the paragraph below it: a short line without
    closing punctuation, then a blank line ("Security and code quality" / "Security matters because ...")."""
    blank = _BLANK_LINE.search(span)
    if blank is None:
        return False
    head = span[: blank.start()].rstrip()
    return not _CLAUSE_END.search(head) and len(words(head)) <= HEADING_WORDS


def whole_sentence_problem(bullet: str, texts: Iterable[str], code: str = "") -> str:
    """Why ``bullet`` is not a whole sentence of one of ``texts`` ('' when it is one): ``navigation``,
    ``list marker``, ``no sentence end``, ``not in the documents``, ``heading merged`` (it runs from a heading
    into the paragraph below) or ``starts mid-sentence``. A sentence that ends with a colon is whole when the
    bullet shows the ``code`` it introduces ("... add the following line to your proftpd.conf:")."""
    if has_navigation(bullet):
        return "navigation"
    if has_stray_marker(bullet):
        return "list marker"
    if "¶" in bullet:
        return "heading merged"  # Sphinx ends its headings with a ¶ link
    if not ends_sentence(bullet) and not (code.strip() and bullet.rstrip().endswith(":")):
        return "no sentence end"
    if not bullet.split():
        return "not in the documents"
    pattern = _flexible(bullet)
    problem = "not in the documents"
    for text in texts:
        for match in pattern.finditer(text):
            if merges_heading(text[match.start():match.end()]):
                problem = "heading merged"
            elif starts_sentence(text, match.start()):
                return ""
            elif problem == "not in the documents":
                problem = "starts mid-sentence"
    return problem


def is_whole_sentence(bullet: str, texts: Iterable[str]) -> bool:
    return whole_sentence_problem(bullet, texts) == ""


def fragment_rate(bullets: Sequence[str], texts: Sequence[str]) -> float | None:
    """The share of ``bullets`` that are not whole sentences of ``texts`` (None without bullets)."""
    if not bullets:
        return None
    return sum(not is_whole_sentence(b, texts) for b in bullets) / len(bullets)


def answers(bullet: str, acceptable: Sequence[str]) -> bool:
    """Whether a bullet states one of the acceptable sentences (gold or also-answers) of its question."""
    return any(matches(bullet, sentence) for sentence in acceptable)


def answer_precision(bullets: Sequence[str], acceptable: Sequence[str]) -> float | None:
    """The share of ``bullets`` that state an acceptable sentence (None without bullets)."""
    if not bullets:
        return None
    return sum(answers(b, acceptable) for b in bullets) / len(bullets)


def gold_stated(bullets: Sequence[str], gold: Sequence[str]) -> list[bool]:
    """For each gold sentence, whether some bullet states it."""
    return [any(matches(b, g) for b in bullets) for g in gold]


def states_gold(bullets: Sequence[str], gold: Sequence[str]) -> bool:
    """The answer states at least one gold sentence."""
    return any(gold_stated(bullets, gold))


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[" + re.escape(_CLOSERS) + r"]*\s+|\n[ \t]*\n")


def sentences_of(text: str) -> list[str]:
    """A document's text cut roughly into sentences (at . ! ? and a space, and at blank lines)."""
    return [normalise(s) for s in _SENTENCE_SPLIT.split(text) if s.strip()]


def supports(document_text: str, bullet: str, threshold: float = MATCH_F1) -> bool:
    """Whether a cited document states the bullet: its text holds the bullet (whitespace aside), or one of its
    sentences matches it with token F1 >= ``threshold``."""
    if normalise(bullet) in normalise(document_text):
        return True
    return any(token_f1(bullet, s) >= threshold for s in sentences_of(document_text))


def citation_correctness(pairs: Sequence[tuple[str, str | None]]) -> float | None:
    """The share of (bullet, cited document's text) pairs where the document states the bullet; a citation of a
    document that is not in the index (text None) is wrong. None without citations."""
    if not pairs:
        return None
    return sum(text is not None and supports(text, bullet) for bullet, text in pairs) / len(pairs)


def abstained(payload: dict[str, Any]) -> bool:
    """Whether an answer abstains: the JSON's own flag when it has one, else no bullet."""
    if isinstance(payload.get("abstained"), bool):
        return bool(payload["abstained"])
    return not payload.get("bullets")


def share(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


# --- the run -------------------------------------------------------------------------------------------------


def _load_corpus_module() -> Any:
    return load_script(HERE / "corpus.py", "realdocs_corpus")


def seen_splits_and_work(description: str, argv: Sequence[str]) -> tuple[list[str], Path]:
    """A script's ``--splits`` (default: every split but the one held out from the latest round, which is
    refused) and ``--work`` (where ``--check-only`` left each split's index), parsed from ``argv``."""
    splits = _load_corpus_module().SPLITS
    held_out = splits[-1]
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--splits", default=",".join(s for s in splits if s != held_out))
    parser.add_argument("--work", type=Path, default=ROOT / ".bench-cache" / "realdocs",
                        help="Where realdocs.py --check-only left each split's index.")
    args = parser.parse_args(argv)
    chosen = args.splits.split(",")
    if held_out in chosen:
        raise SystemExit(f"error: {held_out} is held out from the latest round")
    return chosen, args.work


def checked_index(work: Path, split: str) -> Path:
    """The index ``--check-only --work WORK`` left for ``split``; a clear stop, saying how to build it, when
    there is none."""
    index = work / split / "index"
    if not index.exists():
        raise SystemExit(f"error: no index at {index}: run python benchmarks/realdocs.py --split {split} "
                         f"--check-only --work {work}")
    return index


def load_questions(split: str) -> list[dict[str, Any]]:
    return [q for q in json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"] if q["split"] == split]


_DUMP = """
import json, sys
from citesum.index.store import Index
out = []
for d in Index.open(sys.argv[1]).documents():
    file = d.metadata.get("file") if isinstance(d.metadata.get("file"), str) else d.id.split("#", 1)[0]
    out.append({"id": d.id, "file": file, "format": d.format, "title": d.title, "text": d.text})
json.dump(out, sys.stdout)
"""


def indexed_documents(python: Path, index: Path) -> list[dict[str, Any]]:
    """The documents of an index as stored (id, file, text), read by citesum itself in a process of its own."""
    done = subprocess.run([str(python), "-c", _DUMP, str(index)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: could not read the index at {index}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def check_gold(questions: Sequence[dict[str, Any]], text_of_file: dict[str, str]) -> list[str]:
    """Every gold and also-answers sentence that the extracted text of its file does not hold."""
    normal = {f: normalise(t) for f, t in text_of_file.items()}
    missing = []
    for q in questions:
        for entry in q["gold"] + q.get("also_answers", []):
            text = normal.get(entry["file"])
            if text is None:
                missing.append(f"{q['id']}: {entry['file']} is not in the index")
            elif normalise(entry["sentence"]) not in text:
                missing.append(f"{q['id']}: not in {entry['file']}: {entry['sentence'][:160]!r}")
    return missing


def summarize(citesum: Path, index: Path, question: str, extra: Sequence[str]) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    done = subprocess.run([str(citesum), "summarize", question, "--index", str(index), "--json", *extra],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"error: citesum summarize failed on {question!r}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout), seconds


def score_question(q: dict[str, Any], payload: dict[str, Any], seconds: float, documents: dict[str, dict[str, Any]],
                   texts: Sequence[str]) -> dict[str, Any]:
    """One question's answer with its labels: each bullet's fragment reason, whether it answers, which gold it
    states, whether each citation is right."""
    gold = [g["sentence"] for g in q["gold"]]
    acceptable = gold + [a["sentence"] for a in q.get("also_answers", [])]
    bullets = []
    for bullet in payload.get("bullets", []):
        text = bullet["text"]
        problem = whole_sentence_problem(text, texts, bullet.get("code", ""))
        cited = [{"document": c, "file": documents[c]["file"] if c in documents else None,
                  "correct": c in documents and supports(documents[c]["text"], text)}
                 for c in bullet.get("citations", [])]
        bullets.append({"text": text, "fragment": bool(problem), "fragment_reason": problem,
                        "answers": answers(text, acceptable) if acceptable else False,
                        "states_gold": [i for i, g in enumerate(gold) if matches(text, g)], "citations": cited})
    stated = gold_stated([b["text"] for b in bullets], gold)
    leads = [lead.get("text", "") for lead in payload.get("leads", [])]
    return {"id": q["id"], "kind": q["kind"], "question": q["question"], "seconds": round(seconds, 3),
            "abstained": abstained(payload), "bullets": bullets, "leads": leads,
            # the places (1 first) of the leads that state a gold sentence: a question turned away whose answer
            # was listed below it
            "leads_stating_gold": [place for place, lead in enumerate(leads, 1) if answers(lead, gold)],
            "gold_stated": stated, "notes": payload.get("notes", []), "timings": payload.get("timings", {})}


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The metrics over some scored questions (None where a metric has nothing to count)."""
    bullets = [b for r in rows for b in r["bullets"]]
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    answerable_bullets = [b for r in answerable for b in r["bullets"]]
    specific = [r for r in rows if r["kind"] == "specific"]
    pairs = [c["correct"] for b in bullets for c in b["citations"]]

    def pct(value: float | None) -> float | None:
        return None if value is None else round(100 * value, 1)

    return {
        "questions": len(rows), "bullets": len(bullets),
        "bullets_per_question": round(len(bullets) / len(rows), 2) if rows else None,
        "fragment_rate": pct(share([b["fragment"] for b in bullets])),
        "fragment_reasons": dict(Counter(b["fragment_reason"] for b in bullets if b["fragment"])),
        "answer_precision": pct(share([b["answers"] for b in answerable_bullets])),
        "answer_coverage": pct(share([any(r["gold_stated"]) for r in answerable])),
        "specific_gold_rate": pct(share([any(r["gold_stated"]) for r in specific])),
        "gold_recall": pct(sum(share(r["gold_stated"]) or 0 for r in answerable) / len(answerable)) if answerable
        else None,
        "citation_correctness": pct(share(pairs)),
        "abstention": pct(share([r["abstained"] for r in rows if r["kind"] == "unanswerable"])),
        "false_abstention": pct(share([r["abstained"] for r in answerable])),
        "seconds_per_question": round(sum(r["seconds"] for r in rows) / len(rows), 2) if rows else None,
        # what the answer took once the index was open (the library's own timing, without the process start)
        "median_answer_seconds": _median([r["timings"]["total_s"] for r in rows
                                          if "total_s" in r.get("timings", {})]),
    }


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def corpus_summary(folder: Path, documents: Sequence[dict[str, Any]]) -> dict[str, Any]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    by_format = Counter(p.suffix.lstrip(".").lower() for p in files)
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files),
            "by_format": dict(sorted(by_format.items())),
            "documents": len(documents), "characters": sum(len(d["text"]) for d in documents),
            "not_indexed": sorted(str(p.relative_to(folder)) for p in files
                                  if str(p.relative_to(folder)) not in {d["file"] for d in documents})}


def run_split(split: str, work: Path, citesum: Path, extra: Sequence[str], check_only: bool) -> dict[str, Any]:
    corpus = _load_corpus_module()
    folder = corpus.gather(split, work / split / "docs", cache=work / "cache")
    index = work / split / "index"
    shutil.rmtree(index, ignore_errors=True)
    started = time.perf_counter()
    built = subprocess.run([str(citesum), "index", str(folder), "--index", str(index)], capture_output=True, text=True)
    index_seconds = time.perf_counter() - started
    if built.returncode != 0:
        raise SystemExit(f"error: citesum index failed: {built.stderr.strip()[-2000:]}")
    print(f"[{split}] indexed {folder} in {index_seconds:.1f} s", flush=True)
    stored = indexed_documents(citesum.parent / "python", index)
    documents = {d["id"]: d for d in stored}
    text_of_file: dict[str, str] = {}
    for d in stored:  # the records of one file are its documents' texts together
        text_of_file[d["file"]] = "\n\n".join(filter(None, [text_of_file.get(d["file"]), d["text"]]))
    questions = load_questions(split)
    missing = check_gold(questions, text_of_file)
    if missing:
        print(f"error: {len(missing)} gold sentence(s) of the {split} split are not in the text citesum extracted "
              "(the extraction changed, or mangles them):", file=sys.stderr)
        for line in missing:
            print("  " + line, file=sys.stderr)
        raise SystemExit(2)
    print(f"[{split}] all gold sentences of {len(questions)} questions found in the extracted text", flush=True)
    summary = corpus_summary(folder, stored)
    result: dict[str, Any] = {"corpus": summary, "index_seconds": round(index_seconds, 2),
                              "questions_by_kind": dict(Counter(q["kind"] for q in questions))}
    if check_only:
        return result
    texts = [d["text"] for d in stored]
    rows = []
    for number, q in enumerate(questions, start=1):
        payload, seconds = summarize(citesum, index, q["question"], extra)
        rows.append(score_question(q, payload, seconds, documents, texts))
        print(f"[{split}] {number}/{len(questions)} {q['id']} {seconds:.1f} s, {len(rows[-1]['bullets'])} bullet(s)",
              flush=True)
    result["metrics"] = {"all": aggregate(rows), **{k: aggregate([r for r in rows if r["kind"] == k]) for k in KINDS}}
    result["answer_seconds"] = round(sum(r["seconds"] for r in rows), 1)
    result["details"] = rows
    return result


def code_state(citesum: Path) -> dict[str, Any]:
    """The commit of the code ``citesum`` runs (a ``--citesum`` of another checkout runs that checkout's), and the
    files under its src/ that differ from it; for an installed citesum outside any checkout, where it is."""
    where = subprocess.run([str(citesum.parent / "python"), "-c", "import citesum; print(citesum.__file__)"],
                           capture_output=True, text=True).stdout.strip()
    if not where:
        return {**git_state(), "citesum": "not importable by the citesum's python"}
    tree = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=Path(where).parent, capture_output=True,
                          text=True).stdout.strip()
    return git_state(Path(tree)) if tree else {"commit": "", "uncommitted_in_src": [], "citesum": where}


def machine(citesum: Path) -> dict[str, Any]:
    venv_python = subprocess.run([str(citesum.parent / "python"), "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "python": venv_python or sys.version.split()[0],
            "runner_python": sys.version.split()[0], "platform": platform.platform()}


COLUMNS = [("questions", "n"), ("bullets_per_question", "bul/q"), ("fragment_rate", "frag%"),
           ("answer_precision", "prec%"), ("answer_coverage", "cover%"), ("specific_gold_rate", "spec%"),
           ("gold_recall", "recall%"), ("citation_correctness", "cite%"), ("abstention", "abst%"),
           ("false_abstention", "falseab%"), ("seconds_per_question", "s/q")]


def table(results: dict[str, Any]) -> str:
    header = ["split", "kind"] + [label for _, label in COLUMNS]
    lines = [header]
    for split, result in results.items():
        for kind, metrics in result.get("metrics", {}).items():
            lines.append([split, kind] + ["-" if metrics[key] is None else str(metrics[key]) for key, _ in COLUMNS])
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.rjust(w) if i > 1 else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))) for row in lines)


def main(argv: Sequence[str]) -> None:
    argv = list(argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["dev", "test", "holdout", "fresh", "next", "sixth", "seventh", "eighth",
                                            "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                                            "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
                                            "twentieth", "twenty-first", "twenty-second", "twenty-third",
                                            "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh",
                                            "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first",
                                            "thirty-second", "thirty-third", "thirty-fourth", "thirty-fifth",
                                            "thirty-sixth", "thirty-seventh", "thirty-eighth", "thirty-ninth",
                                            "fortieth", "forty-first", "forty-second", "forty-third", "forty-fourth",
                                            "all"],
                        required=True, help="all: dev and test (holdout, fresh, next, sixth, seventh, eighth, ninth, "
                        "tenth, eleventh, twelfth, thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, "
                        "eighteenth, nineteenth, twentieth, twenty-first, twenty-second, twenty-third, "
                        "twenty-fourth, twenty-fifth, twenty-sixth, twenty-seventh, twenty-eighth, twenty-ninth, "
                        "thirtieth, thirty-first, thirty-second, thirty-third, thirty-fourth, thirty-fifth, "
                        "thirty-sixth, thirty-seventh, thirty-eighth, thirty-ninth, fortieth, forty-first, "
                        "forty-second, forty-third and forty-fourth run only when named)")
    parser.add_argument("--work", type=Path, default=ROOT / ".bench-cache" / "realdocs",
                        help="Where the corpus, its cache and the indexes go.")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "realdocs.json")
    parser.add_argument("--citesum", type=Path, default=ROOT / ".venv" / "bin" / "citesum")
    parser.add_argument("--check-only", action="store_true",
                        help="Gather, index and check the gold sentences; answer nothing, write nothing.")
    args = parser.parse_args(own)
    if not args.citesum.exists():
        raise SystemExit(f"error: no citesum at {args.citesum} (make install, or --citesum PATH)")
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    run = {"command": " ".join(["python", "benchmarks/realdocs.py", *argv]),
           "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "git": code_state(args.citesum),
           "machine": machine(args.citesum), "summarize_args": extra}
    results = {}
    for split in splits:
        started = time.perf_counter()
        results[split] = {"run": run, **run_split(split, args.work, args.citesum, extra, args.check_only)}
        results[split]["wall_seconds"] = round(time.perf_counter() - started, 1)
    if args.check_only:
        for split, result in results.items():
            print(f"[{split}] corpus: {json.dumps(result['corpus'])}")
        return
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    payload = {"benchmark": "realdocs", "description": __doc__.split("\n\n")[0],
               "splits": {**previous.get("splits", {}), **results}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print()
    print(table(results))
    walls = ", ".join(f"{split}: {result['wall_seconds']} s" for split, result in results.items())
    print(f"\nwrote {args.out}  ({walls})")


if __name__ == "__main__":
    main(sys.argv[1:])
