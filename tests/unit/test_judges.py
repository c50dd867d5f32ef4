from __future__ import annotations

import json

import numpy as np
import pytest

from citesum.embed.base import TokenVectors
from citesum.errors import ConfigError, IngestError, LLMError
from citesum.evaluate.judges import get_judge
from citesum.evaluate.llm_judge import LLMJudge, parse_llm_judgment
from citesum.evaluate.meta import judge_quality, label_values, load_annotations, pearson_interval, stored_judge_names
from citesum.evaluate.offline import (
    LexicalJudge, OfflineJudge, Thresholds, fit_thresholds, keyword_recall_matrix, load_thresholds,
    tfidf_cosine_matrix, token_recall_matrix,
)
from citesum.evaluate.summhay import Judgment
from citesum.llm.fake import FakeLLM

BULLETS = ["Household water rates will rise by 7.5 percent on January 1.",
           "The Eastline tram links the airport and the central station in 22 minutes.",
           "Median rent for a two-bedroom flat reached $2,340 a month."]


def test_parse_llm_judgment_variants() -> None:
    assert parse_llm_judgment("i", '{"coverage": "FULL", "bullet_id": 2}', 3) == Judgment("i", "FULL", 2)
    fenced = '```json\n{"coverage": "PARTIAL_COVERAGE", "bullet_id": "1"}\n```'
    assert parse_llm_judgment("i", fenced, 3) == Judgment("i", "PARTIAL", 1)
    assert parse_llm_judgment("i", '{"coverage": "NO", "bullet_id": null}', 3) == Judgment("i", "NO", None)
    # a bullet that does not exist cannot cover the insight
    assert parse_llm_judgment("i", '{"coverage": "FULL", "bullet_id": 9}', 3) == Judgment("i", "NO", None)
    with pytest.raises(LLMError, match="not the expected JSON"):
        parse_llm_judgment("i", "I think it is covered.", 3)
    with pytest.raises(LLMError):
        parse_llm_judgment("i", '{"coverage": "MAYBE", "bullet_id": 1}', 3)


def test_llm_judge_sends_one_insight_and_the_bullets_as_json() -> None:
    llm = FakeLLM(['{"coverage": "FULL", "bullet_id": 1}', '{"coverage": "NO", "bullet_id": null}'])
    judgments = LLMJudge(llm).judge([("a", "Water rates rise 7.5%."), ("b", "A stadium is planned.")], BULLETS)
    assert judgments == [Judgment("a", "FULL", 1), Judgment("b", "NO", None)]
    assert "Insight: Water rates rise 7.5%." in llm.prompts[0]
    listing = llm.prompts[0].split("Summary bullets (JSON, keyed by bullet id):\n")[1].split("\n\nInsight:")[0]
    assert json.loads(listing) == {"1": BULLETS[0], "2": BULLETS[1], "3": BULLETS[2]}


def test_llm_judge_asks_for_its_json_schema() -> None:
    llm = FakeLLM(['{"coverage": "PARTIAL", "bullet_id": 3}'])
    assert LLMJudge(llm).judge([("a", "Rent is high.")], BULLETS) == [Judgment("a", "PARTIAL", 3)]
    schema = llm.requests[0].json_schema
    assert schema is not None and schema["properties"]["coverage"]["enum"] == ["FULL", "PARTIAL", "NO"]
    custom = FakeLLM(['{"coverage": "NO", "bullet_id": null}'])
    LLMJudge(custom, prompt="Bullets: {bullets}\nInsight: {insight}\nJSON:").judge([("a", "Rent is high.")], BULLETS)
    assert custom.prompts[0].startswith("Bullets: {") and custom.prompts[0].endswith("Insight: Rent is high.\nJSON:")


def test_unreadable_judge_replies_are_asked_again_then_counted_no_and_listed() -> None:
    llm = FakeLLM(['{"coverage": "FULL", "bullet_id": 1}', "The insight is covered.",  # first round
                   '{"coverage": "PARTIAL", "bullet_id": 2}'])  # the retry of the second insight
    judge = LLMJudge(llm)
    assert judge.judge([("a", "Rates rise."), ("b", "The tram takes 22 minutes.")], BULLETS) == [
        Judgment("a", "FULL", 1), Judgment("b", "PARTIAL", 2)]
    assert judge.unparsed == []
    retry = llm.requests[2]
    assert retry.messages == llm.requests[1].messages and (retry.seed, retry.temperature) == (1, 0.7)

    stubborn = LLMJudge(FakeLLM(["Covered, I think.", "Still prose."]))
    assert stubborn.judge([("c", "Rent is $2,340.")], BULLETS) == [Judgment("c", "NO", None)]
    assert stubborn.unparsed == ["insight c: 'Still prose.'"]


def test_judge_quality_by_hand() -> None:
    human = [Judgment("a", "FULL", 1), Judgment("b", "NO"), Judgment("c", "PARTIAL", 2), Judgment("d", "FULL", 3)]
    guess = [Judgment("a", "FULL", 1), Judgment("b", "PARTIAL", 2), Judgment("c", "PARTIAL", 1), Judgment("d", "NO")]
    quality = judge_quality(zip(human, guess))
    assert quality.judgments == 4
    assert quality.linking_accuracy == 0.5  # a (same bullet), c (other bullet); b, d not covered by both
    assert quality.pearson == pytest.approx(np.corrcoef([1, 0, 0.5, 1], [1, 0.5, 0.5, 0])[0, 1])


def _summaries(rng: np.random.Generator, count: int, noise: float, insights: int = 6) -> list[np.ndarray]:
    """Simulated judge benchmark: per summary, rows of (human label value, a judge's label value = the human's
    plus Gaussian noise, snapped to 0 / 0.5 / 1)."""
    out = []
    for _ in range(count):
        human = rng.choice([0.0, 0.5, 1.0], size=insights)
        judged = np.clip(np.round(2 * (human + rng.normal(0, noise, insights))) / 2, 0, 1)
        out.append(np.column_stack([human, judged]))
    return out


def test_pearson_interval_covers_the_true_correlation() -> None:
    rng = np.random.default_rng(0)
    population = np.vstack(_summaries(rng, 20_000, noise=0.4))
    true_r = np.corrcoef(population[:, 0], population[:, 1])[0, 1]
    hits, widths = 0, []
    for seed in range(40):  # 40 benchmarks of 100 summaries; a 95% interval should miss about 2 of them
        low, high = pearson_interval(_summaries(np.random.default_rng(seed + 1), 100, noise=0.4), resamples=1000)
        hits += low <= true_r <= high
        widths.append(high - low)
    assert hits >= 34
    assert 0.02 < np.mean(widths) < 0.2


def test_pearson_interval_resamples_summaries_not_insights() -> None:
    rng = np.random.default_rng(3)
    summaries = _summaries(rng, 60, noise=0.5, insights=1)
    # Each summary repeated as 8 identical insights: no new evidence, so the interval must not narrow, as it
    # would if the 480 insights were resampled as independent draws.
    copies = [np.repeat(s, 8, axis=0) for s in summaries]
    single = pearson_interval(summaries)
    repeated = pearson_interval(copies)
    insight_level = pearson_interval([row[None, :] for s in copies for row in s])
    assert repeated[1] - repeated[0] == pytest.approx(single[1] - single[0], rel=0.05)
    assert insight_level[1] - insight_level[0] < 0.5 * (repeated[1] - repeated[0])


def test_pearson_interval_paired_difference() -> None:
    rng = np.random.default_rng(5)
    noisy = _summaries(rng, 100, noise=0.5)
    perfect = [np.column_stack([s, s[:, 0]]) for s in noisy]  # human, noisy judge, a judge that agrees exactly
    low, high = pearson_interval(perfect)
    assert high < 0  # the noisy judge is worse, beyond doubt
    same = [np.column_stack([s, s[:, 1]]) for s in noisy]
    assert pearson_interval(same) == (0.0, 0.0)
    assert pearson_interval([s[:, [0, 0]] for s in noisy]) == pytest.approx((1.0, 1.0))  # never resampled to NaN
    with pytest.raises(ValueError, match="insights x 2"):
        pearson_interval([np.zeros((3, 4)), np.zeros((3, 4))])
    assert pearson_interval(noisy[:1]) is None  # one summary: nothing to resample


def test_label_values_pairs_two_judges_on_the_same_insights() -> None:
    human = [Judgment("a", "FULL", 1), Judgment("b", "NO")]
    first = [[(human[0], Judgment("a", "PARTIAL", 1)), (human[1], Judgment("b", "NO"))]]
    second = [[(human[0], Judgment("a", "NO")), (human[1], Judgment("b", "FULL", 2))]]
    assert [v.tolist() for v in label_values(first)] == [[[1.0, 0.5], [0.0, 0.0]]]
    assert [v.tolist() for v in label_values(first, second)] == [[[1.0, 0.5, 0.0], [0.0, 0.0, 1.0]]]
    # a summary without insights adds nothing to the sums, and does not break the interval
    values = label_values(first + [[]] + first)
    assert values[1].shape == (0, 2) and pearson_interval(values) is not None


def test_fit_thresholds_separates_three_levels() -> None:
    rng = np.random.default_rng(0)
    targets = np.repeat([0.0, 0.5, 1.0], 30)
    scores = targets + rng.normal(0, 0.05, 90)
    thresholds = fit_thresholds(scores, targets)
    no, partial, full = scores[:30], scores[30:60], scores[60:]
    # the groups do not overlap, so thresholds in the gaps label every score right, and the fit finds them
    assert no.max() < thresholds.partial_at <= partial.min() and partial.max() < thresholds.full_at <= full.min()


def test_fit_thresholds_follows_the_sample_weights() -> None:
    # the same scores, two labellings that place the thresholds differently: the weights decide which one wins
    scores = np.repeat([0.2, 0.4, 0.6, 0.8], 20)
    generous = np.repeat([0.0, 0.5, 1.0, 1.0], 20)  # thresholds 0.3 / 0.5
    strict = np.repeat([0.0, 0.0, 0.5, 1.0], 20)  # thresholds 0.5 / 0.7
    both, targets = np.concatenate([scores, scores]), np.concatenate([generous, strict])
    weight = np.repeat([1.0, 10.0], 80)
    strict_fit, generous_fit = fit_thresholds(both, targets, weight), fit_thresholds(both, targets, weight[::-1])
    assert (strict_fit.partial_at, strict_fit.full_at) == pytest.approx((0.5, 0.7))
    assert (generous_fit.partial_at, generous_fit.full_at) == pytest.approx((0.3, 0.5))


@pytest.mark.parametrize("judge", [lambda: OfflineJudge("wordllama"), LexicalJudge])
def test_offline_judges_link_the_stating_bullet(judge) -> None:  # type: ignore[no-untyped-def]
    judge = judge()
    judgments = judge.judge([("rates", "Water rates for households go up 7.5 percent from January 1."),
                             ("stadium", "The football club will build a new 40,000-seat stadium.")], BULLETS)
    assert judgments[0].coverage != "NO" and judgments[0].bullet == 1
    assert judgments[1].coverage == "NO" and judgments[1].bullet is None
    assert [j.coverage for j in judge.judge([("x", "Anything.")], [])] == ["NO"]
    # what a bullet cites is not what it says: "[12]" must not match the insight's "12"
    insight = [("n", "Water rates rise 12 percent.")]
    cited = judge.best_bullets(insight, ["Household water rates rise in January [12]."])
    plain = judge.best_bullets(insight, ["Household water rates rise in January."])
    unstripped = judge.scores([insight[0][1]], ["Household water rates rise in January 12."])
    assert cited == plain and float(unstripped[0, 0]) > plain[0][1]


def test_fit_thresholds_refuses_what_it_cannot_fit() -> None:
    with pytest.raises(ValueError, match="three distinct scores"):
        fit_thresholds(np.array([0.2, 0.2, 0.8, 0.8]), np.array([0.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="two distinct targets"):
        fit_thresholds(np.array([0.1, 0.2, 0.3]), np.array([1.0, 1.0, 1.0]))


def test_thresholds_label() -> None:
    thresholds = Thresholds(partial_at=0.3, full_at=0.7)
    assert [thresholds.label(v) for v in (0.1, 0.3, 0.69, 0.7)] == ["NO", "PARTIAL", "PARTIAL", "FULL"]


def _pieces(*pairs: tuple[str, tuple[float, float]]) -> TokenVectors:
    vectors = np.array([v for _, v in pairs], dtype=np.float32).reshape(-1, 2)
    return TokenVectors(tuple(t for t, _ in pairs), vectors / np.linalg.norm(vectors, axis=1, keepdims=True))


def test_token_recall_weights_pieces_by_local_idf_by_hand() -> None:
    import math

    x, y, diagonal = (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)
    insight = _pieces(("rates", x), ("rise", y), (".", x))
    bullets = [_pieces(("rates", x), ("climb", diagonal)), _pieces(("rates", x)), TokenVectors((), np.zeros((0, 2)))]
    recall = token_recall_matrix([insight], bullets)
    # 4 texts; "rates" is in 3 of them, "rise" in 1; "." weighs nothing.
    w_rates, w_rise = math.log(5 / 4) + 0.1, math.log(5 / 2) + 0.1
    cos45 = 1 / math.sqrt(2)
    assert recall[0, 0] == pytest.approx((w_rates * 1.0 + w_rise * cos45) / (w_rates + w_rise), rel=1e-5)
    assert recall[0, 1] == pytest.approx(w_rates / (w_rates + w_rise), rel=1e-5)  # "rise" finds only "rates" (cos 0)
    assert recall[0, 2] == 0.0  # an empty bullet covers nothing
    assert token_recall_matrix([insight], [TokenVectors((), np.zeros((0, 2)))]).tolist() == [[0.0]]


def test_keyword_recall_and_tfidf_cosine_by_hand() -> None:
    import math

    insights = [["rate", "rise", "rise"]]
    bullets = [["rate", "rise"], ["rate"], []]
    # 4 texts: "rate" in 3, "rise" in 2 (the insight and the first bullet)
    w_rate, w_rise = math.log(5 / 4) + 0.1, math.log(5 / 3) + 0.1
    recall = keyword_recall_matrix(insights, bullets)
    assert recall[0].tolist() == pytest.approx([1.0, w_rate / (w_rate + w_rise), 0.0])
    cosine = tfidf_cosine_matrix(insights, bullets)
    insight_vector = np.array([w_rate, (1 + math.log(2)) * w_rise])
    expected = insight_vector @ np.array([w_rate, w_rise]) / np.linalg.norm(insight_vector) / math.hypot(w_rate, w_rise)
    assert cosine[0].tolist() == pytest.approx([expected, w_rate / np.linalg.norm(insight_vector), 0.0])


def test_thresholds_of_another_score_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"score": "cosine", "thresholds": {"wordllama": {"partial_at": 0.3, "full_at": 0.6}}}))
    with pytest.raises(ConfigError, match="another score"):
        load_thresholds("wordllama", path)
    with pytest.raises(ConfigError, match="no offline-judge thresholds for 'minilm'"):
        load_thresholds("minilm", path)


def test_shipped_thresholds_exist_for_every_offline_judge() -> None:
    for name in ("minilm", "wordllama", "lexical"):
        thresholds = load_thresholds(name)
        assert 0 < thresholds.partial_at < thresholds.full_at < 1
    assert get_judge("lexical").name == "lexical"
    with pytest.raises(ConfigError, match="lexical"):
        get_judge("nope")


def _annotated(insights: list[str], judges: dict[str, list[str]], subtopic: str = "s1") -> dict[str, object]:
    """One summary of a judge benchmark in the eval_benchmark_dev.json format."""
    return {"topic_fn": "t.json", "subtopic_id": subtopic, "summary": ["- Rates rise 7.5 percent [1]."],
            "reference_insights": [{"insight_id": i, "insight": f"Insight {i}."} for i in insights],
            "annotation": [{"insight_id": i, "coverage": "fully_covered", "candidate_id": 0} for i in insights],
            **{f"predictions_{name}": [{"insight_id": i, "coverage": "NO_COVERAGE", "bullet_id": "NA"} for i in ids]
               for name, ids in judges.items()}}


def test_load_annotations_reports_bad_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.json"
    good.write_text(json.dumps([_annotated(["a", "b"], {"gpt": ["a", "b"], "partial": ["a"]}),
                                _annotated(["c"], {"gpt": ["c"], "partial": ["c"]})]))
    samples = load_annotations(good)
    assert samples[0].human["a"] == Judgment("a", "FULL", 1) and samples[0].stored["gpt"]["b"].coverage == "NO"
    assert stored_judge_names(samples) == ["gpt"]  # "partial" did not judge insight b: not comparable
    unlabelled = _annotated(["a", "b"], {})
    unlabelled["annotation"] = unlabelled["annotation"][:1]  # type: ignore[index]
    cases = {"empty.json": (b"", "JSONDecodeError"), "object.json": (b'{"a": 1}', "TypeError"),
             "binary.json": (b"\xff\xfe\x00PK", "UnicodeDecodeError"),
             "fields.json": (b'[{"topic_fn": "t"}]', "KeyError: 'annotation'"),
             "label.json": (json.dumps([unlabelled]).encode(), "without a human label: \\['b'\\]"),
             "none.json": (b"[]", "no annotated summaries")}
    for name, (content, reason) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(IngestError, match=f"{name}: .*{reason}"):
            load_annotations(tmp_path / name)


def test_cli_eval_judge_on_a_bad_and_a_small_benchmark(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from citesum.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('[{"topic_fn": "t"}]')
    result = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(bad)])
    assert result.exit_code == 1
    assert "bad.json: not a judge benchmark file" in result.stderr and "Traceback" not in result.output
    small = tmp_path / "small.json"
    small.write_text(json.dumps([_annotated(["a", "b"], {"gpt": ["a", "b"]}),
                                 _annotated(["c"], {"gpt": ["c"]}, subtopic="s2")]))
    result = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(small), "--judge", "offline:wordllama",
                                       "--json"])
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["judge"] for r in rows] == ["gpt", "offline:wordllama"] and rows[0]["judgments"] == 3
    assert rows[0]["pearson"] == 0.0  # the stored judge says NO to every FULL insight: constant, no correlation
    assert len(rows[0]["pearson_ci95"]) == 2 and len(rows[0]["ours_minus_this_r_ci95"]) == 2
    # the intervals resample subtopics: with both summaries in one subtopic there is nothing to resample
    one = tmp_path / "one.json"
    one.write_text(json.dumps([_annotated(["a", "b"], {"gpt": ["a", "b"]}), _annotated(["c"], {"gpt": ["c"]})]))
    result = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(one), "--judge", "offline:wordllama"])
    assert result.exit_code == 0 and "n/a" in result.stdout


def test_load_annotations_accepts_news_samples_that_name_their_topic_by_id(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The SummHay repository's news samples carry ``topic_id`` where the conversation samples carry ``topic_fn``."""
    news = _annotated(["a"], {"gpt": ["a"]})
    del news["topic_fn"]
    news["topic_id"] = "news1"
    path = tmp_path / "news.json"
    path.write_text(json.dumps([news, _annotated(["b"], {"gpt": ["b"]})]))
    assert [sample.topic for sample in load_annotations(path)] == ["news1", "t.json"]
    del news["topic_id"]
    path.write_text(json.dumps([news]))
    with pytest.raises(IngestError, match="KeyError: 'topic_id'"):
        load_annotations(path)
