"""Coverage judges: for each reference insight, a label (FULL / PARTIAL / NO) and the covering bullet.

* ``offline`` — no LLM: the best bullet by embedding cosine + keyword recall; a linear score of a few robust
  features (cosine, keyword recall, token-alignment recall and its lift over the other bullets, shared figures,
  margin over the runner-up bullet) cut by two thresholds. Weights and thresholds come from
  ``benchmarks/calibrate_offline_judge.py`` (human labels of ``eval_benchmark_dev.json``; the stored GPT-4o
  judgments of the news haystacks are used only where they cross-validate better) and ship in
  ``offline_judge.json``, one set per embedder.
* ``llm`` — our own prompt (one insight and the numbered bullets as JSON in; label and bullet id as JSON out)
  through any :class:`~citesum.llm.LLM`, cached like every LLM call.

The meta-evaluation (Pearson r against human labels mapped to 1 / 0.5 / 0, and linking accuracy over insights
both the human and the judge mark covered) reproduces the paper's numbers for the stored judges.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Protocol, Sequence

import numpy as np

from citesum.embed.base import TokenVectors
from citesum.errors import ConfigError, IngestError, LLMError, unknown_name_error
from citesum.evaluate.summhay import Coverage, Judgment

LABEL_VALUE: dict[Coverage, float] = {"FULL": 1.0, "PARTIAL": 0.5, "NO": 0.0}
HUMAN_LABELS: dict[str, Coverage] = {"fully_covered": "FULL", "partially_covered": "PARTIAL", "not_covered": "NO"}
STORED_LABELS: dict[str, Coverage] = {"FULL_COVERAGE": "FULL", "PARTIAL_COVERAGE": "PARTIAL", "NO_COVERAGE": "NO"}
CALIBRATION_FILE = Path(__file__).with_name("offline_judge.json")
_FIGURE = re.compile(r"\d[\d,.]*\d|\d")
_WORD_CHARACTER = re.compile(r"[^\W_]")
_MARKUP = re.compile(r"[*#]+")


class Judge(Protocol):
    name: str

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        """``insights`` are (id, text); bullet ids in the result are 1-based positions in ``bullets``."""
        ...


# ---- offline judge -----------------------------------------------------------------------------------
FEATURES = ("cosine", "keyword_recall", "token_recall", "token_recall_lift", "figure_share", "has_figures", "margin")


def judged_text(bullet: str) -> str:
    """What the judges compare of a bullet: what it says, not what it cites ("[12]" must not match a figure "12"
    of the insight), without Markdown emphasis ("**" would be a token of its own)."""
    from citesum.summarize.citations import strip_citations

    return _MARKUP.sub(" ", strip_citations(bullet))


def token_recall_matrix(insights: Sequence[TokenVectors], bullets: Sequence[TokenVectors]) -> np.ndarray:
    """(insights x bullets) BERTScore-style recall: each insight piece's best cosine with a piece of the bullet,
    averaged with IDF weights counted over this summary's bullets and insights.

    The local IDF is the point: the words every text of the summary shares (its topic) weigh little, so the
    score rewards a bullet for the insight's specific details (a name, a figure, a place), which is what separates
    FULL from PARTIAL coverage. Punctuation pieces weigh nothing.
    """
    from citesum.index.lexical import document_frequency

    texts = [*insights, *bullets]
    frequency = document_frequency([set(text.tokens) for text in texts])
    recall = np.zeros((len(insights), len(bullets)))
    filled = [j for j, bullet in enumerate(bullets) if bullet.tokens]
    if not filled:
        return recall
    stacked = np.vstack([bullets[j].vectors for j in filled])
    starts = np.cumsum([0] + [len(bullets[j].tokens) for j in filled[:-1]])
    for i, insight in enumerate(insights):
        # +0.1: a piece found in every text still counts a little (log(...) would make it exactly 0).
        weights = np.array([0.0 if not _WORD_CHARACTER.search(token) else
                            math.log((len(texts) + 1) / (frequency[token] + 1)) + 0.1
                            for token in insight.tokens])
        if weights.sum() == 0:
            continue
        best_match = np.maximum.reduceat(insight.vectors @ stacked.T, starts, axis=1)  # pieces x filled bullets
        recall[i, filled] = weights @ best_match / weights.sum()
    return recall


def insight_features(insight: str, bullets: Sequence[str], cosine: np.ndarray, keyword_recall: np.ndarray,
                     token_recall: np.ndarray) -> tuple[int, list[float]]:
    """(index of the best bullet, its features) from one insight's rows of the three similarity matrices.

    The best bullet maximises cosine + keyword recall; ``token_recall_lift`` is how far that bullet's token
    recall stands above the insight's mean over all bullets (a bullet that merely shares the topic does not).
    """
    combined = cosine + keyword_recall
    best = int(np.argmax(combined))
    figures = {f.replace(",", "") for f in _FIGURE.findall(insight)}
    shared = {f.replace(",", "") for f in _FIGURE.findall(bullets[best])} & figures
    ranked = np.sort(combined)[::-1]
    margin = float(ranked[0] - ranked[1]) if len(ranked) > 1 else float(ranked[0])
    return best, [float(cosine[best]), float(keyword_recall[best]), float(token_recall[best]),
                  float(token_recall[best] - token_recall.mean()),
                  len(shared) / len(figures) if figures else 0.0, 1.0 if figures else 0.0, margin]


@dataclass(frozen=True)
class Calibration:
    """score = bias + weights . features; FULL if score >= full_at, PARTIAL if >= partial_at."""

    bias: float
    weights: tuple[float, ...]
    partial_at: float
    full_at: float

    def score(self, features: Sequence[float]) -> float:
        return self.bias + float(np.dot(self.weights, features))

    def label(self, features: Sequence[float]) -> Coverage:
        value = self.score(features)
        return "FULL" if value >= self.full_at else "PARTIAL" if value >= self.partial_at else "NO"


def fit_calibration(features: np.ndarray, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> Calibration:
    """Least squares on the 1 / 0.5 / 0 targets, then the two thresholds that maximise Pearson r."""
    design = np.hstack([np.ones((len(features), 1)), features])
    weight = np.ones(len(targets)) if sample_weight is None else sample_weight
    root = np.sqrt(weight)[:, None]
    coefficients = np.linalg.lstsq(design * root, targets * root[:, 0], rcond=None)[0]
    scores = design @ coefficients
    candidates = np.quantile(scores, np.linspace(0.05, 0.99, 60))
    best = (-2.0, 0.0, 0.0)
    for i, low in enumerate(candidates):
        for high in candidates[i + 1 :]:
            labels = np.where(scores >= high, 1.0, np.where(scores >= low, 0.5, 0.0))
            if labels.std() == 0:
                continue
            r = _weighted_pearson(labels, targets, weight)
            if r > best[0]:
                best = (r, float(low), float(high))
    return Calibration(float(coefficients[0]), tuple(float(c) for c in coefficients[1:]), best[1], best[2])


def _weighted_pearson(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> float:
    weight = weight / weight.sum()
    da, db = a - (weight * a).sum(), b - (weight * b).sum()
    denominator = np.sqrt((weight * da * da).sum() * (weight * db * db).sum())
    return float((weight * da * db).sum() / denominator) if denominator > 0 else 0.0


def load_calibration(embedder: str, path: Path = CALIBRATION_FILE) -> Calibration:
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
        stored = content["calibrations"][embedder]
    except (OSError, KeyError, ValueError) as exc:
        raise ConfigError(f"no offline-judge calibration for embedder '{embedder}' in {path} "
                          "(run benchmarks/calibrate_offline_judge.py)") from exc
    if tuple(content.get("features", ())) != FEATURES:
        raise ConfigError(f"the offline-judge calibration in {path} was fit on other features "
                          f"({content.get('features')}, this version computes {list(FEATURES)}); "
                          "run benchmarks/calibrate_offline_judge.py")
    return Calibration(stored["bias"], tuple(stored["weights"]), stored["partial_at"], stored["full_at"])


class OfflineJudge:
    """The judge without an LLM (see the module docstring)."""

    def __init__(self, embedder: str = "minilm", calibration: Calibration | None = None) -> None:
        from citesum.embed import get_embedder

        self.embedder = get_embedder(embedder)
        self.calibration = calibration or load_calibration(embedder)
        self.name = f"offline:{embedder}"

    def features(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[tuple[int, list[float]]]:
        from citesum.index.lexical import tokenize

        if not bullets:
            return [(-1, [0.0] * len(FEATURES)) for _ in insights]
        bullets = [judged_text(b) for b in bullets]
        texts = [text for _, text in insights]
        insight_vectors, insight_pieces = self.embedder.encode_with_tokens(texts)
        bullet_vectors, bullet_pieces = self.embedder.encode_with_tokens(bullets)
        cosine = insight_vectors @ bullet_vectors.T
        bullet_words = [set(t) for t in tokenize(list(bullets))]
        keyword_recall = np.array([[len(words & b) / max(1, len(words)) for b in bullet_words]
                                   for words in (set(t) for t in tokenize(texts))])
        token_recall = token_recall_matrix(insight_pieces, bullet_pieces)
        return [insight_features(text, bullets, cosine[i], keyword_recall[i], token_recall[i])
                for i, text in enumerate(texts)]

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        out = []
        for (insight_id, _), (best, features) in zip(insights, self.features(insights, bullets)):
            label = self.calibration.label(features) if best >= 0 else "NO"
            out.append(Judgment(insight_id, label, best + 1 if label != "NO" else None))
        return out


# ---- LLM judge -----------------------------------------------------------------------------------------
# The bullets come before the insight: the requests for one summary then share their long prefix, which servers
# with prefix caching (llama.cpp, vLLM, OpenAI) do not compute again.
LLM_JUDGE_PROMPT = """You check whether a summary covers a reference insight.

Summary bullets (JSON, keyed by bullet id):
{bullets}

Insight: {insight}

Does any bullet state the insight? Answer "FULL" if one bullet states all of it, "PARTIAL" if one bullet states
part of it, "NO" otherwise. Reply with JSON only: {{"coverage": "FULL" | "PARTIAL" | "NO", "bullet_id": <id or null>}}"""


#: The answer's shape, sent as the request's JSON schema so that servers which can constrain decoding do.
LLM_JUDGMENT_SCHEMA = {
    "type": "object",
    "properties": {"coverage": {"type": "string", "enum": ["FULL", "PARTIAL", "NO"]},
                   "bullet_id": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
    "required": ["coverage", "bullet_id"],
    "additionalProperties": False,
}


class LLMJudge:
    """One request per insight. A reply that is not the expected JSON is asked again
    (``retries_on_bad_output`` times, see :meth:`ChatRequest.retry`); one still unreadable then counts as NO
    coverage and is listed in :attr:`unparsed`, which every report shows, so a long evaluation is not lost to one
    bad reply and the bad replies are never hidden."""

    def __init__(self, llm: object, retries_on_bad_output: int = 1, prompt: str = LLM_JUDGE_PROMPT) -> None:
        from citesum.llm.base import LLM

        if not isinstance(llm, LLM):
            raise ConfigError("LLMJudge needs a citesum LLM backend")
        self.llm = llm
        self.name = f"llm:{llm.name}"
        self.retries_on_bad_output = retries_on_bad_output
        self.prompt = prompt  # with {bullets} and {insight}
        self.unparsed: list[str] = []  # "insight <id>: <reply>" for every reply counted as NO unread

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        from citesum.llm.base import ChatRequest

        listing = json.dumps({str(i): b for i, b in enumerate(bullets, start=1)}, ensure_ascii=False, indent=1)
        requests = [ChatRequest.from_prompt(self.prompt.format(insight=text, bullets=listing), max_tokens=64,
                                            json_schema=LLM_JUDGMENT_SCHEMA) for _, text in insights]
        judged: dict[int, Judgment] = {}
        replies: dict[int, str] = {}
        pending = list(range(len(insights)))
        for attempt in range(self.retries_on_bad_output + 1):
            sent = [requests[k].retry(attempt) if attempt else requests[k] for k in pending]
            for k, completion in zip(pending, self.llm.map(sent)):
                try:
                    judged[k] = parse_llm_judgment(insights[k][0], completion.text, len(bullets))
                except LLMError:
                    replies[k] = completion.text
            pending = [k for k in pending if k not in judged]
            if not pending:
                break
        for k in pending:
            self.unparsed.append(f"insight {insights[k][0]}: {replies[k][:120]!r}")
            judged[k] = Judgment(insights[k][0], "NO", None)
        return [judged[k] for k in range(len(insights))]


def parse_llm_judgment(insight_id: str, text: str, bullets: int) -> Judgment:
    """Read {"coverage": ..., "bullet_id": ...} from a reply (tolerating prose and code fences around it)."""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    try:
        reply = json.loads(match.group(0) if match else "")
        label = str(reply["coverage"]).upper().replace("_COVERAGE", "")
        if label not in LABEL_VALUE:
            raise ValueError(label)
        bullet = reply.get("bullet_id")
        bullet = int(bullet) if bullet not in (None, "", "null", "NA") else None
    except (ValueError, KeyError, TypeError) as exc:
        raise LLMError(f"judge reply for insight {insight_id} is not the expected JSON: {text[:120]!r}") from exc
    if bullet is not None and not 1 <= bullet <= bullets:
        bullet = None  # a bullet that does not exist cannot cover anything
    if label != "NO" and bullet is None:
        label = "NO"
    return Judgment(insight_id, label, bullet if label != "NO" else None)  # type: ignore[arg-type]


def get_judge(name: str, **options: object) -> Judge:
    if name == "offline" or name.startswith("offline:"):
        return OfflineJudge(name.split(":", 1)[1] if ":" in name else "minilm")
    if name == "llm":
        if options.get("llm") is None:
            raise ConfigError("the 'llm' judge needs a model (--model and --base-url of an OpenAI-compatible server)")
        return LLMJudge(options["llm"])
    raise unknown_name_error("judge", name, ["offline", "offline:<embedder>", "llm"])


# ---- meta-evaluation ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnnotatedSample:
    """One summary of the human judge benchmark."""

    topic: str
    subtopic: str
    summary: tuple[str, ...]
    insights: tuple[tuple[str, str], ...]
    human: Mapping[str, Judgment]
    stored: Mapping[str, Mapping[str, Judgment]]  # judge name -> insight id -> judgment


def load_annotations(path: str | Path) -> list[AnnotatedSample]:
    """``eval_benchmark_dev.json``: human labels (0-based ``candidate_id``) and stored LLM judges (1-based).

    A file that is not such a benchmark (unreadable, not JSON, missing fields, no summaries) raises
    :class:`IngestError` naming the file and the reason."""
    samples = []
    try:
        for row in json.loads(Path(path).read_text(encoding="utf-8")):
            human = {}
            for a in row["annotation"]:
                candidate = a.get("candidate_id")
                bullet = int(candidate) + 1 if candidate not in (None, "no_selection") else None
                human[a["insight_id"]] = Judgment(a["insight_id"], HUMAN_LABELS[a["coverage"]], bullet)
            stored = {}
            for key, predictions in row.items():
                if key.startswith("predictions_"):
                    stored[key.removeprefix("predictions_")] = {
                        p["insight_id"]: Judgment(p["insight_id"], STORED_LABELS[p["coverage"]],
                                                  p["bullet_id"] if isinstance(p["bullet_id"], int) else None)
                        for p in predictions}
            insights = tuple((i["insight_id"], i["insight"]) for i in row["reference_insights"])
            if unlabelled := [i for i, _ in insights if i not in human]:
                raise KeyError(f"insight(s) without a human label: {unlabelled}")
            # the conversation samples name their topic file (topic_fn), the news samples of the SummHay
            # repository their topic (topic_id)
            topic = row["topic_fn"] if "topic_fn" in row else row["topic_id"]
            samples.append(AnnotatedSample(str(topic), str(row.get("subtopic_id", "")), tuple(row["summary"]),
                                           insights, human, stored))
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise IngestError(f"{path}: not a judge benchmark file like eval_benchmark_dev.json "
                          f"({type(exc).__name__}: {exc})") from exc
    if not samples:
        raise IngestError(f"{path}: no annotated summaries")
    return samples


def stored_judge_names(samples: Sequence[AnnotatedSample]) -> list[str]:
    """The stored judges that judged every insight of every summary (in the first summary's order)."""
    return [name for name in samples[0].stored
            if all(name in s.stored and all(i in s.stored[name] for i, _ in s.insights) for s in samples)]


@dataclass(frozen=True)
class JudgeQuality:
    pearson: float
    linking_accuracy: float
    judgments: int


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r, 0 where one side is constant (a judge that says NO to everything correlates with nothing)."""
    return float(np.corrcoef(a, b)[0, 1]) if np.std(a) > 0 and np.std(b) > 0 else 0.0


def judge_quality(pairs: Iterable[tuple[Judgment, Judgment]]) -> JudgeQuality:
    """(human, judge) pairs -> Pearson r of the 1 / 0.5 / 0 labels and linking accuracy (same bullet, over
    insights both mark covered)."""
    human, judged, linked = [], [], []
    for truth, guess in pairs:
        human.append(LABEL_VALUE[truth.coverage])
        judged.append(LABEL_VALUE[guess.coverage])
        if truth.coverage != "NO" and guess.coverage != "NO":
            linked.append(truth.bullet == guess.bullet)
    return JudgeQuality(_pearson(np.array(human), np.array(judged)), float(np.mean(linked)) if linked else 0.0,
                        len(human))


def judgments_by_summary(samples: Sequence[AnnotatedSample], judge: Judge | str) -> list[list[tuple[Judgment, Judgment]]]:
    """For each summary, its (human, judge) pairs; a judge given by name is one of the stored judges."""
    out = []
    for sample in samples:
        if isinstance(judge, str):
            predicted = sample.stored[judge]
        else:
            predicted = {j.insight_id: j for j in judge.judge(sample.insights, sample.summary)}
        out.append([(sample.human[i], predicted[i]) for i, _ in sample.insights])
    return out


def meta_evaluate(samples: Sequence[AnnotatedSample], judge: Judge | str) -> JudgeQuality:
    """Quality of a judge (or of a stored judge, by name) against the human labels."""
    return judge_quality(pair for summary in judgments_by_summary(samples, judge) for pair in summary)


def quality_with_interval(judged: Sequence[Sequence[tuple[Judgment, Judgment]]]) -> dict[str, object]:
    """Pearson r with its 95% interval, linking accuracy and the number of judgments, from the (human, judge)
    pairs of each summary (:func:`judgments_by_summary`)."""
    quality = judge_quality(pair for summary in judged for pair in summary)
    return {**quality.__dict__, "pearson_ci95": pearson_interval(label_values(judged))}


def pearson_interval(labels_by_summary: Sequence[np.ndarray], confidence: float = 0.95, resamples: int = 2000,
                     seed: int = 0) -> tuple[float, float] | None:
    """Bootstrap confidence interval (BCa) of judge quality, resampling whole summaries.

    ``labels_by_summary[s]`` holds one row per insight of summary ``s``: the human label value, then one column
    per judge. With one judge the statistic is its Pearson r with the humans; with two, the first judge's r
    minus the second's on the same resampled insights (a paired comparison: an interval that excludes 0 says
    one judge agrees with the humans better than the other beyond the luck of this benchmark's draw).
    Summaries, not insights, are resampled because one summary's insights share its bullets and its annotator,
    so they are not independent draws; resampling insights would give too narrow an interval. None for fewer
    than two summaries: there is nothing to resample.
    """
    from scipy.stats import DegenerateDataWarning, bootstrap

    if len(labels_by_summary) < 2:
        return None

    widths = {labels.shape[1] for labels in labels_by_summary}
    if len(widths) != 1 or (width := widths.pop()) not in (2, 3):
        raise ValueError("labels_by_summary: every summary needs (insights x 2) or (insights x 3) label values")
    # Pearson r of pooled insights needs only sums, so each summary is reduced to its sums once and a resample's
    # r comes from adding rows: the whole bootstrap is a few array operations instead of a loop of corrcoefs.
    sums = np.array([[len(labels), labels[:, 0].sum(), (labels[:, 0] ** 2).sum(),
                      *(value for j in range(1, width)
                        for value in (labels[:, j].sum(), (labels[:, j] ** 2).sum(), labels[:, 0] @ labels[:, j]))]
                     for labels in labels_by_summary])

    def pooled_r(total: np.ndarray, judge: int) -> np.ndarray:
        n, human, human_squares = total[..., 0], total[..., 1], total[..., 2]
        judged, judged_squares, products = (total[..., 3 + 3 * judge + k] for k in range(3))
        spread = (n * human_squares - human**2) * (n * judged_squares - judged**2)
        # 0 where one side is constant, as in _pearson
        return np.where(spread > 1e-12, (n * products - human * judged) / np.sqrt(np.maximum(spread, 1e-12)), 0.0)

    def statistic(chosen: np.ndarray, axis: int = -1) -> np.ndarray:
        total = sums[np.moveaxis(chosen, axis, -1)].sum(axis=-2)  # summaries x sums -> sums, per resample
        return pooled_r(total, 0) - pooled_r(total, 1) if width == 3 else pooled_r(total, 0)

    everything = np.arange(len(labels_by_summary))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # BCa cannot be computed when every resample gives the same value (a judge compared with itself, or one
        # that never disagrees with the humans); that case is answered below.
        warnings.simplefilter("ignore", DegenerateDataWarning)
        result = bootstrap((everything,), statistic, n_resamples=resamples, vectorized=True,
                           confidence_level=confidence, method="BCa", rng=np.random.default_rng(seed))
    if np.ptp(result.bootstrap_distribution) < 1e-12:
        point = float(statistic(everything))
        return point, point
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def label_values(*judged: Sequence[Sequence[tuple[Judgment, Judgment]]]) -> list[np.ndarray]:
    """The label values ``pearson_interval`` takes, from ``judgments_by_summary`` of one or two judges on the
    same summaries (the human labels are taken from the first)."""
    return [np.array([[LABEL_VALUE[pairs[0][k][0].coverage], *(LABEL_VALUE[p[k][1].coverage] for p in pairs)]
                      for k in range(len(pairs[0]))], dtype=float).reshape(-1, 1 + len(judged))
            for pairs in zip(*judged)]
