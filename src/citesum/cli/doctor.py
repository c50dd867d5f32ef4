"""``citesum doctor``: is an LLM server ready for citesum? Whether it answers, its models, the model's context window
(and where that number came from), JSON-schema support, its speed on a short request, and the context budget
citesum will use with it, with the time a request at that budget would take."""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict
from typing import Any, Callable, NoReturn

import click

from citesum.cli.common import echo_json, echo_table
from citesum.defaults import DEFAULT_BULLETS, DEFAULT_WORDS
from citesum.errors import BudgetError, CitesumError, LLMError, MissingExtraError

#: answer tokens of the speed check: enough to time the writing, few enough to be quick on a CPU
SPEED_ANSWER_TOKENS = 32
#: the query's share of the prompt in the budget shown (a question of a few sentences)
QUERY_TOKENS = 256
#: the JSON-schema check asks for one of these, as {"colour": ...}: a closed choice, so an answer follows the schema
#: or visibly does not
COLOURS = ("red", "blue")
COLOUR_SCHEMA = {"type": "object", "properties": {"colour": {"type": "string", "enum": list(COLOURS)}},
                 "required": ["colour"], "additionalProperties": False}


@click.command()
@click.option("--base-url", required=True, envvar="OPENAI_BASE_URL", metavar="URL",
              help="OpenAI-compatible base URL of the server, e.g. http://127.0.0.1:8080/v1 (default "
                   "$OPENAI_BASE_URL).")
@click.option("--model", default=None, help="The model to check (default: the server's only model).")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="The --window you would give citesum: the smaller of it and the server's window is used.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds for each test request.")
@click.option("--json", "as_json", is_flag=True)
def doctor(base_url: str, model: str | None, window: int | None, api_key_env: str, timeout: float,
           as_json: bool) -> None:
    """Check an LLM server for citesum: that it answers, its models, the model's context window, JSON-schema
    support, its speed, and the context budget citesum will use with it. Exits with status 1 when the server
    cannot be reached or a check fails."""
    try:
        import httpx
    except ImportError as exc:
        raise MissingExtraError("citesum doctor", "openai", "httpx") from exc

    from citesum.llm.window import discover_window

    base_url = base_url.rstrip("/")
    key = os.environ.get(api_key_env) or None
    report: dict[str, Any] = {"base_url": base_url}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(timeout=timeout, headers=headers) as client:
        try:
            models = _listed_models(client, base_url)
            report.update(reachable=True, models=models)
            report["model"] = _chosen_model(models, model)
        except CitesumError as exc:
            report.setdefault("reachable", False)
            _fail(report, as_json, exc)
        found = discover_window(base_url, report["model"], given=window, api_key=key)
        report["window"] = asdict(found)
        # the JSON check first: its request also wakes the model, so that the speed check times a warm one
        report["json_schema"] = _checked(_json_schema_support, client, base_url, report["model"])
        report["speed"] = _checked(_speed, client, base_url, report["model"])
    report.update(_budget_and_time(found.tokens, report["speed"]))
    if as_json:
        echo_json(report)
    else:
        _echo_report(report)
    failed = [f"the {name.replace('_', ' ')} check failed: {report[name]['error']}"
              for name in ("json_schema", "speed") if "error" in report[name]]
    if failed:
        raise CitesumError("; ".join(failed))


def _fail(report: dict[str, Any], as_json: bool, error: CitesumError) -> NoReturn:
    """Ends the command with ``error`` (the report so far first, with ``--json``)."""
    report["error"] = str(error)
    if as_json:
        echo_json(report)
    raise error


# ---- the server and its models -----------------------------------------------------------------------------------

def _listed_models(client: Any, base_url: str) -> list[str]:
    """The model names of ``GET {base_url}/models`` (none for a server without that list)."""
    import httpx

    try:
        response = client.get(f"{base_url}/models")
    except httpx.HTTPError as exc:
        raise CitesumError(f"cannot reach {base_url} ({type(exc).__name__}: {exc}): is the server running, and is "
                           "this its OpenAI-compatible base URL (most end in /v1)?") from exc
    if response.status_code == 404:
        return []
    _raise_for_status(response, base_url)
    try:
        entries = response.json()["data"]
        return [entry["id"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
    except (ValueError, KeyError, TypeError) as exc:
        raise CitesumError(f"{base_url}/models is not an OpenAI model list: {response.text[:200]!r}") from exc


def _chosen_model(models: list[str], model: str | None) -> str:
    if model:
        return model
    if len(models) == 1:
        return models[0]
    if not models:
        raise CitesumError("the server lists no model: name it with --model")
    raise CitesumError(f"the server serves {len(models)} models ({', '.join(models)}): pick one with --model")


def _raise_for_status(response: Any, base_url: str) -> None:
    """The client's verdict on an error status, as an :class:`LLMError` whether or not the client would retry it:
    the doctor tells, it does not retry."""
    from citesum.llm.openai_compat import raise_for_status

    try:
        raise_for_status(response, base_url)
    except LLMError:
        raise
    except Exception as exc:  # the retryable kind (429, 5xx), private to the client
        raise LLMError(f"{base_url}: {exc}") from exc


# ---- chat requests -----------------------------------------------------------------------------------------------

def _post_chat(client: Any, base_url: str, payload: dict[str, Any]) -> tuple[Any, float]:
    """The server's response to a chat request, and the seconds it took; :class:`LLMError` when none came."""
    import httpx

    started = time.perf_counter()
    try:
        response = client.post(f"{base_url}/chat/completions", json=payload)
    except httpx.HTTPError as exc:
        raise LLMError(f"{base_url}: no answer ({type(exc).__name__}: {exc})") from exc
    return response, time.perf_counter() - started


def _answer(response: Any, base_url: str) -> dict[str, Any]:
    """The body of a chat answer; :class:`LLMError` for an error status or a body without an answer."""
    _raise_for_status(response, base_url)
    try:
        body = response.json()
        body["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMError(f"{base_url}: not a chat answer: {response.text[:200]!r}") from exc
    return body  # type: ignore[no-any-return]


def _text(body: dict[str, Any]) -> str:
    return body["choices"][0]["message"].get("content") or ""


def _checked(check: Callable[..., dict[str, Any]], *arguments: Any) -> dict[str, Any]:
    """What ``check`` found, or its failure: one failed check does not hide the others."""
    try:
        return check(*arguments)
    except LLMError as exc:
        return {"error": str(exc)}


# ---- JSON schema -------------------------------------------------------------------------------------------------

def _json_schema_support(client: Any, base_url: str, model: str) -> dict[str, Any]:
    """The ``response_format`` form the client will send this server (the first of JSON_DIALECTS it does not
    refuse, as the client finds it), and whether the answer follows the schema."""
    from citesum.llm.base import JSON_DIALECTS, json_response_format

    refused: list[str] = []
    for dialect in JSON_DIALECTS:
        payload: dict[str, Any] = {
            "model": model, "max_tokens": SPEED_ANSWER_TOKENS, "temperature": 0.0,
            "messages": [{"role": "user", "content": f"Name a colour, {' or '.join(COLOURS)}. Answer in JSON: "
                                                     '{"colour": "..."}'}]}
        form = json_response_format(COLOUR_SCHEMA, dialect)
        if form is not None:
            payload["response_format"] = form
        response, _ = _post_chat(client, base_url, payload)
        if form is not None and response.status_code >= 400 and "response_format" in response.text:
            refused.append(dialect)
            continue
        text = _text(_answer(response, base_url))
        return {"form": dialect, "refused": refused, "follows_schema": _follows_schema(text), "answer": text[:200]}
    raise AssertionError("the last form sends no response_format, so it cannot be refused")


def _follows_schema(text: str) -> bool:
    try:
        answer = json.loads(text)
    except ValueError:
        return False
    return isinstance(answer, dict) and set(answer) == {"colour"} and answer["colour"] in COLOURS


# ---- speed -------------------------------------------------------------------------------------------------------

def _speed(client: Any, base_url: str, model: str) -> dict[str, Any]:
    """Prompt and generation tokens per second on a prompt of a few hundred tokens: from the server's own
    timings (llama.cpp's server gives them), else from the token counts and the wall time of two requests, one
    that only reads (one answer token) and one that writes too."""
    writing = _timed_answer(client, base_url, model, SPEED_ANSWER_TOKENS)
    timed = _server_timings(writing[0])
    if timed is not None:
        return timed
    return _speed_from_clock(_timed_answer(client, base_url, model, 1), writing)


def _timed_answer(client: Any, base_url: str, model: str, max_tokens: int) -> tuple[dict[str, Any], float]:
    payload = {"model": model, "max_tokens": max_tokens, "temperature": 0.0,
               "messages": [{"role": "user", "content": _speed_prompt()}]}
    response, seconds = _post_chat(client, base_url, payload)
    return _answer(response, base_url), seconds


def _speed_prompt() -> str:
    """A prompt of a few hundred tokens that asks for a long answer. It begins anew each time: a server that keeps
    the last prompt's tokens (llama.cpp's slots, vLLM's prefix cache) would otherwise read only what is new."""
    readings = " ".join(f"Reading {number}: the reservoir at station {number} held its level through the week."
                        for number in range(1, 21))
    return f"Check {secrets.token_hex(4)}. {readings}\nNow count from 1 to 100, separated by commas."


def _server_timings(body: dict[str, Any]) -> dict[str, Any] | None:
    timings = body.get("timings")
    if not isinstance(timings, dict):
        return None
    prompt_speed, generation_speed = timings.get("prompt_per_second"), timings.get("predicted_per_second")
    if not (_positive(prompt_speed) and _positive(generation_speed)):
        return None
    return {"prompt_tokens": timings.get("prompt_n"), "completion_tokens": timings.get("predicted_n"),
            "prompt_tokens_per_s": float(prompt_speed), "generation_tokens_per_s": float(generation_speed),
            "measured_from": "the server's timings"}


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _usage(body: dict[str, Any]) -> tuple[int, int]:
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _speed_from_clock(reading: tuple[dict[str, Any], float], writing: tuple[dict[str, Any], float]) -> dict[str, Any]:
    """Speeds from a request that only read (its one answer token is counted as reading: a slight underestimate)
    and one that wrote too (its writing time: its time less its own prompt's, at the reading speed)."""
    (read_prompt, read_answer), read_seconds = _usage(reading[0]), reading[1]
    (write_prompt, write_answer), write_seconds = _usage(writing[0]), writing[1]
    if not (read_prompt and write_prompt and write_answer):
        return {"prompt_tokens": None, "completion_tokens": None, "prompt_tokens_per_s": None,
                "generation_tokens_per_s": None, "measured_from": "nothing: the server gave no token counts (usage)"}
    prompt_speed = read_prompt / read_seconds
    writing_seconds = write_seconds - write_prompt / prompt_speed
    more_tokens = write_answer - read_answer
    if more_tokens >= 1 and writing_seconds > 0:
        generation_speed, how = more_tokens / writing_seconds, "token counts (usage) and wall time"
    else:  # the model stopped at once, or the clock's noise outweighs the writing: the whole request's pace
        generation_speed, how = write_answer / write_seconds, "token counts (usage) and wall time (a lower bound)"
    return {"prompt_tokens": write_prompt, "completion_tokens": write_answer, "prompt_tokens_per_s": prompt_speed,
            "generation_tokens_per_s": generation_speed, "measured_from": how}


# ---- budget ------------------------------------------------------------------------------------------------------

def _budget_and_time(window: int, speed: dict[str, Any]) -> dict[str, Any]:
    """The context budget citesum takes from ``window`` with the default answer, and how long a request at that
    budget would take at the measured speeds (None when they are unknown)."""
    from citesum.summarize import answer_tokens, window_budget

    answer = answer_tokens(DEFAULT_BULLETS, DEFAULT_WORDS)
    try:
        tokens = window_budget(window, bullets=DEFAULT_BULLETS, words=DEFAULT_WORDS, query_tokens=QUERY_TOKENS)
    except BudgetError as exc:
        return {"budget": {"tokens": None, "error": str(exc)}, "request_seconds": None}
    budget = {"tokens": tokens, "bullets": DEFAULT_BULLETS, "words": DEFAULT_WORDS, "query_tokens": QUERY_TOKENS,
              "answer_tokens": answer}
    prompt_speed, generation_speed = speed.get("prompt_tokens_per_s"), speed.get("generation_tokens_per_s")
    if not (prompt_speed and generation_speed):
        return {"budget": budget, "request_seconds": None}
    # a request at that budget fills the window but for the answer's room; the answer may use all of its room
    reading = (window - answer) / prompt_speed
    writing = answer / generation_speed
    return {"budget": budget, "request_seconds": {"prompt_tokens": window - answer, "reading": reading,
                                                  "answer_tokens": answer, "writing": writing,
                                                  "total": reading + writing}}


# ---- output ------------------------------------------------------------------------------------------------------

def _echo_report(report: dict[str, Any]) -> None:
    models = report["models"]
    listed = f"{len(models)} model(s): {', '.join(models)}" if models else "no model list"
    model_note = "" if not models or report["model"] in models else " (not in the server's list)"
    rows = [("server", f"reachable at {report['base_url']}; {listed}"),
            ("model", report["model"] + model_note),
            ("window", f"{report['window']['tokens']} tokens: {report['window']['source']}"),
            ("JSON schema", _json_schema_row(report["json_schema"])),
            *_speed_rows(report["speed"]),
            ("budget", _budget_row(report["budget"])),
            ("request at that budget", _request_row(report["request_seconds"]))]
    echo_table(["check", "result"], rows)


def _json_schema_row(found: dict[str, Any]) -> str:
    if "error" in found:
        return f"failed: {found['error']}"
    refused = f" ({', '.join(found['refused'])} refused)" if found["refused"] else ""
    form = "no form: the schema is in the prompt only" if found["form"] == "none" else f"{found['form']} form"
    follows = "the answer follows the schema" if found["follows_schema"] else \
        f"the answer does not follow the schema: {found['answer'][:60]!r}"
    return f"{form}{refused}; {follows}"


def _speed_rows(speed: dict[str, Any]) -> list[tuple[str, str]]:
    if "error" in speed:
        return [("speed", f"failed: {speed['error']}")]
    if speed["prompt_tokens_per_s"] is None:
        return [("speed", f"unknown: {speed['measured_from']}")]
    prompt = (f"{speed['prompt_tokens_per_s']:,.1f} tokens/s ({speed['prompt_tokens']} prompt tokens; from "
              f"{speed['measured_from']})")
    generation = f"{speed['generation_tokens_per_s']:,.1f} tokens/s ({speed['completion_tokens']} answer tokens)"
    return [("prompt speed", prompt), ("generation speed", generation)]


def _budget_row(budget: dict[str, Any]) -> str:
    if budget["tokens"] is None:
        return f"none: {budget['error']}"
    return (f"{budget['tokens']} tokens of context ({budget['bullets']} bullets, {budget['words']} words, a "
            f"{budget['query_tokens']}-token query, {budget['answer_tokens']} answer tokens)")


def _request_row(seconds: dict[str, Any] | None) -> str:
    if seconds is None:
        return "unknown (no speed)"
    return (f"about {seconds['total']:,.1f} s: {seconds['prompt_tokens']} prompt tokens in "
            f"{seconds['reading']:,.1f} s, {seconds['answer_tokens']} answer tokens in {seconds['writing']:,.1f} s")
