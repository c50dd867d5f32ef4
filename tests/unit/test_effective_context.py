from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.effective_context import (
    TABLE, fixed_budgets, known_models, length_tokens, lookup, model_key, parse_user_length, read_user_lengths,
)
from citesum.errors import ConfigError


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_table_holds_the_published_values_in_tokens() -> None:
    ruler = {row.model: row for row in TABLE if row.benchmark == "RULER"}
    # RULER README: Llama3.1 (8B) claims 128K and is effective to 32K; GPT-4-1106-preview to 64K
    assert (ruler["Llama-3.1-8B-Instruct"].tokens, ruler["Llama-3.1-8B-Instruct"].window) == (32_768, 131_072)
    assert ruler["GPT-4-1106-preview"].tokens == 65_536 and ruler["GPT-4-1106-preview"].published == "64K"
    # ">128K" (passed at every tested length) reads as its bound, and keeps its sign in `published`
    assert ruler["Gemini-1.5-pro"].tokens == 131_072 and ruler["Gemini-1.5-pro"].published == ">128K"
    assert all(row.source for row in TABLE) and all(row.tokens % 1024 == 0 for row in TABLE)
    assert {row.benchmark for row in TABLE} == {"RULER", "HELMET-Summ", "HELMET-LongQA"}
    # one row per model and benchmark
    assert len({(row.model, row.benchmark) for row in TABLE}) == len(TABLE)


@pytest.mark.parametrize("spelling", ["Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct",
                                      "llama3.1 8b", "LLAMA-3.1-8B", "Llama31_8B"])
def test_common_spellings_find_the_same_model(spelling: str) -> None:
    rows = lookup(spelling)
    assert {row.model for row in rows} == {"Llama-3.1-8B-Instruct"}
    assert {row.benchmark: row.tokens for row in rows} == {"RULER": 32_768, "HELMET-Summ": 32_768,
                                                           "HELMET-LongQA": 65_536}


def test_aliases_name_the_data_sets_spellings() -> None:
    assert [row.model for row in lookup("gpt4-turbo")] == ["GPT-4-1106-preview"]  # SummHay's stored system
    assert [row.model for row in lookup("command-r")] == ["Command-R"]  # not Command-R-plus or -0824
    assert lookup("Qwen25_7B_1M")[0].model == "Qwen2.5-7B-Instruct-1M"  # the hybrid-RAG code's spelling
    assert lookup("qwen2.5-7b")[0].model == "Qwen2.5-7B-Instruct"  # a different model from the 1M one
    assert model_key("Qwen/Qwen2.5-7B-Instruct") == model_key("qwen2.5 7b") != model_key("qwen2.5-7b-1m")


def test_an_unknown_model_is_refused_with_the_known_names() -> None:
    with pytest.raises(ConfigError) as raised:
        lookup("llama-3.1-9b")
    message = str(raised.value)
    assert "no published effective context length for model 'llama-3.1-9b'" in message
    assert "did you mean Llama-3.1-8B-Instruct" in message
    assert all(name in message for name in known_models())
    assert "--effective-length 'llama-3.1-9b=32K'" in message


def test_user_values_override_the_table_and_add_models() -> None:
    mine = [parse_user_length("gpt-4-turbo=20000"), parse_user_length("my-model=12K")]
    # a value given under an alias replaces the table's rows of that model, whatever spelling is looked up
    assert [(r.benchmark, r.tokens) for r in lookup("GPT-4-1106-preview", mine)] == [("user", 20_000)]
    assert [(r.model, r.tokens, r.source) for r in lookup("My_Model", mine)] == [("my-model", 12_288,
                                                                                  "user-supplied")]
    assert "my-model" in known_models(mine) and lookup("gemini-1.5-pro", mine)[0].benchmark == "RULER"


@pytest.mark.parametrize("bad, message", [
    ("llama=lots", "'lots' is not a token count"),
    ("llama=-5", "'-5' is not a token count"),
    ("llama=0", "must be at least 1 token"),
    ("llama 32768", "takes NAME=TOKENS"),
    ("=32768", "takes NAME=TOKENS"),
    ("llama=", "'' is not a token count"),
])
def test_bad_user_values_say_what_to_give(bad: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_user_length(bad)


def test_lengths_read_as_the_benchmarks_write_them() -> None:
    assert [length_tokens(t) for t in ("32768", "32K", "32k", ">128K", "1M", "32,768")] == [
        32_768, 32_768, 32_768, 131_072, 1_048_576, 32_768]


def test_user_values_from_json_and_csv_files(tmp_path: Path) -> None:
    (tmp_path / "lengths.json").write_text(json.dumps({"my-model": 24576, "other": "16K"}))
    assert [(r.model, r.tokens) for r in read_user_lengths(tmp_path / "lengths.json")] == [
        ("my-model", 24_576), ("other", 16_384)]
    (tmp_path / "lengths.csv").write_text("model,tokens\nmy-model,8K\n\nllama-3.1-8b,20000\n")
    assert [(r.model, r.tokens) for r in read_user_lengths(tmp_path / "lengths.csv")] == [
        ("my-model", 8_192), ("llama-3.1-8b", 20_000)]
    (tmp_path / "bad.csv").write_text("my-model,8K,extra\n")
    with pytest.raises(ConfigError, match="expected rows 'model,tokens'"):
        read_user_lengths(tmp_path / "bad.csv")
    (tmp_path / "bad.json").write_text(json.dumps({"my-model": "a lot"}))
    with pytest.raises(ConfigError, match="bad.json: 'a lot' is not a token count"):
        read_user_lengths(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        read_user_lengths(tmp_path / "list.json")


def test_fixed_budgets_are_capped_by_the_window() -> None:
    budgets = fixed_budgets(["llama-3.1-8b", "Llama31_8B", "gemini-1.5-pro"], window=50_000)
    assert [(b.length.benchmark, b.budget, b.capped) for b in budgets] == [
        ("RULER", 32_768, False), ("HELMET-Summ", 32_768, False), ("HELMET-LongQA", 50_000, True),
        ("RULER", 50_000, True)]  # the model named twice counts once
    assert budgets[0].label == "RULER: Llama-3.1-8B-Instruct (32K)"
    assert [b.budget for b in fixed_budgets(["gemini-1.5-pro"])] == [131_072]  # no window: no cap
    with pytest.raises(ConfigError, match="known models"):
        fixed_budgets(["gpt-4o"])


def test_the_budgets_command_lists_the_table_with_sources() -> None:
    code, out, _ = _run("budgets", "--model", "llama3.1-8b")
    assert code == 0
    assert "| Llama-3.1-8B-Instruct | RULER | 32K | 32768 | 131072 | [1] |" in out
    assert "[1] NVIDIA/RULER README.md @ebe802cd" in out and "[3] adithya7/hybrid-rag" in out
    code, out, _ = _run("budgets", "--json")
    assert code == 0 and len(json.loads(out)) == len(TABLE)
    code, _, err = _run("budgets", "--model", "gpt-4o")
    assert code == 1 and "error: no published effective context length for model 'gpt-4o'" in err


def test_estimate_budget_compares_the_estimate_with_fixed_budgets_and_the_full_context(  # type: ignore[no-untyped-def]
        serve, tmp_path: Path, haystack, monkeypatch: pytest.MonkeyPatch) -> None:
    from fixtures import fact_stating_panel, write_demo_queries

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    index = str(tmp_path / "ix")
    assert _run("index", str(haystack.write(tmp_path / "corpus")), "--index", index, "--exclude", "gold.json")[0] == 0
    queries = write_demo_queries(tmp_path / "queries.txt")
    server = serve(fact_stating_panel([]))
    common = ["estimate-budget", str(queries), "--index", index, "--panel-model", "a", "--base-url", server.url,
              "--budgets", "150,3000", "--fraction", "0.7", "--samples", "1", "--words", "60", "--window", "6000"]
    # a user's length for a known model replaces the table's; one for a new model adds it; the window cuts both
    code, out, err = _run(*common, "--baseline-model", "llama-3.1-8b", "--effective-length", "llama31_8b=3000",
                          "--effective-length", "tiny=150", "--baseline-model", "gemini-1.5-pro", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["utility"] == "mean ROUGE-1/2/L F1"
    rows = {row["label"]: row for row in result["compared"]}
    assert list(rows) == ["estimate", "user: llama31_8b (3000)", "RULER: Gemini-1.5-pro (>128K)",
                          "user: tiny (150)", "full context"]
    assert rows["estimate"]["budget"] == result["estimate"] == 3000
    # on the grid, a fixed budget takes the grid's score: the same runs
    assert rows["user: tiny (150)"]["mean"] == result["means"]["150"] < rows["estimate"]["mean"]
    assert rows["user: llama31_8b (3000)"]["mean"] == result["means"]["3000"]
    gemini = next(b for b in result["baselines"] if b["model"] == "Gemini-1.5-pro")
    assert gemini["budget"] == rows["RULER: Gemini-1.5-pro (>128K)"]["budget"] == 6000 and gemini["capped"]
    # the full context is the whole collection cut to the room the panel's prompt leaves in the window
    assert 3000 < rows["full context"]["budget"] < 6000 - 1024
    assert 0 < rows["full context"]["mean"] <= 1 and rows["full context"]["std"] == 0.0

    code, out, err = _run(*common, "--baseline-model", "Llama-3.1-8B")
    assert code == 0, err
    assert "| RULER: Llama-3.1-8B-Instruct (32K) | 6000 |" in out and "(cut to --window 6,000)" in out
    assert "| full context |" in out and "(utility: mean ROUGE-1/2/L F1)" in out

    for bad, message in ((["--baseline-model", "gpt-4o"], "no published effective context length for model 'gpt-4o'"),
                         (["--effective-length", "gpt-4o"], "--effective-length takes NAME=TOKENS"),
                         (["--effective-length", "gpt-4o=many"], "'many' is not a token count")):
        code, _, err = _run(*common, *bad)
        assert code == 1 and message in err, err
