"""The model's window, asked of loopback servers that answer as llama.cpp's server, vLLM, Ollama, OpenAI and
llama-cpp-python's server do (or say nothing, or cannot be reached), and ``citesum doctor`` against them."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Iterator, Union

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.llm.window import DEFAULT_WINDOW, Window, discover_window
from live import free_port
from loopback import Server, reply

pytest.importorskip("httpx")

#: what a route answers: (status, JSON body or raw bytes), or a function of the request's body giving that
Answer = Union[tuple[int, Any], Callable[[dict], tuple[int, Any]]]
Routes = dict[str, Answer]
#: starts a server answering its routes (the ``routed`` fixture)
Start = Callable[[Routes], Server]

MODEL = "local-model"


@pytest.fixture
def routed() -> Iterator[Start]:
    """Starts loopback servers answering ``"METHOD /path"`` routes (anything else: 404, as a server that does not
    have that route)."""
    servers: list[Server] = []

    def start(routes: Routes) -> Server:
        def script(handler: BaseHTTPRequestHandler, request: dict, _: int) -> None:
            answer = routes.get(f"{handler.command} {handler.path}", (404, {"error": "not found"}))
            status, body = answer(request) if callable(answer) else answer
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            reply(handler, status, payload, {"Content-Type": "application/json"})

        servers.append(Server(script, get=script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _models(*entries: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"object": "list", "data": list(entries)}


def _chat_answer(text: str, **extra: Any) -> tuple[int, Any]:
    return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": 400, "completion_tokens": 32}, **extra}


def _asked_chat(server: Server) -> bool:
    return "POST /v1/chat/completions" in server.paths


# ---- each kind of server ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("props", [{"default_generation_settings": {"n_ctx": 8192, "params": {}}, "total_slots": 1},
                                   {"n_ctx": 8192}])
def test_llamacpp_server_props(routed: Start, props: dict) -> None:
    server = routed({"GET /props": (200, props)})
    window = discover_window(server.url, MODEL)
    assert window.tokens == 8192 and "llama.cpp" in window.source and "/props" in window.source
    assert server.paths == ["GET /props"]  # the first that answers ends the search


def test_vllm_models_max_model_len(routed: Start) -> None:
    server = routed({"GET /v1/models": _models({"id": "other", "object": "model", "max_model_len": 2048},
                                               {"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768})})
    window = discover_window(server.url, "Qwen/Qwen2.5-7B")
    assert window.tokens == 32768 and "vLLM" in window.source and "max_model_len" in window.source
    assert not _asked_chat(server)


def _ollama(show: dict[str, Any]) -> Routes:
    def answer_show(request: dict) -> tuple[int, Any]:
        if request.get("model") != "llama3.1:8b":
            return 404, {"error": f"model '{request.get('model')}' not found"}
        return 200, show

    return {"GET /v1/models": _models({"id": "llama3.1:8b", "object": "model", "owned_by": "library"}),
            "POST /api/show": answer_show}


def test_ollama_num_ctx(routed: Start) -> None:
    server = routed(_ollama({"parameters": 'num_ctx                        8192\nstop                           '
                                           '"<|eot_id|>"',
                             "model_info": {"general.architecture": "llama", "llama.context_length": 131072}}))
    window = discover_window(server.url, "llama3.1:8b")
    assert window.tokens == 8192 and "Ollama" in window.source and "num_ctx" in window.source
    assert not _asked_chat(server)


def test_ollama_without_num_ctx_runs_its_default_not_the_trained_length(routed: Start) -> None:
    server = routed(_ollama({"parameters": 'stop                           "<|eot_id|>"',
                             "model_info": {"general.architecture": "llama", "llama.context_length": 131072}}))
    window = discover_window(server.url, "llama3.1:8b")
    assert window.tokens == 4096
    assert "Ollama" in window.source and "default" in window.source and "num_ctx" in window.source
    assert "131072" in window.source  # the trained length is told, not used
    assert not _asked_chat(server)
    # a server started with OLLAMA_CONTEXT_LENGTH runs the model with more: --window replaces the guess
    given = discover_window(server.url, "llama3.1:8b", given=32_768)
    assert given.tokens == 32_768 and "--window" in given.source and "guess" in given.source


@pytest.mark.parametrize("model, tokens", [
    ("gpt-4o", 128_000), ("gpt-4o-2024-08-06", 128_000), ("gpt-4o-mini", 128_000),
    ("gpt-4o-mini-2024-07-18", 128_000), ("gpt-4.1", 1_047_576), ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano-2025-04-14", 1_047_576), ("gpt-4-turbo", 128_000), ("gpt-4-turbo-2024-04-09", 128_000),
    ("gpt-4-0125-preview", 128_000), ("gpt-4", 8192), ("gpt-4-0613", 8192), ("gpt-3.5-turbo", 16_385),
    ("gpt-3.5-turbo-0125", 16_385), ("gpt-3.5-turbo-instruct", 4096), ("o1", 200_000), ("o1-2024-12-17", 200_000),
    ("o1-mini", 128_000), ("o3", 200_000), ("o3-mini-2025-01-31", 200_000), ("o4-mini", 200_000),
    ("openai/gpt-4o-mini", 128_000),
])
def test_openai_models_by_name(routed: Start, model: str, tokens: int) -> None:
    # OpenAI's API says no window anywhere; a request too large is refused for its max_tokens, with no window
    refused = (400, {"error": {"message": "max_tokens is too large: 10000000. This model supports at most 16384 "
                                          "completion tokens, whereas you provided 10000000.",
                               "type": "invalid_request_error", "param": "max_tokens", "code": "invalid_value"}})
    server = routed({"GET /v1/models": _models({"id": model, "object": "model", "owned_by": "system"}),
                     "POST /v1/chat/completions": refused})
    window = discover_window(server.url, model)
    assert window.tokens == tokens and window.source.startswith("OpenAI's published window for ")
    assert model.split("/")[-1].startswith(window.source.split()[-1])  # the model, or the model it is a snapshot of
    assert not _asked_chat(server)  # the name was enough


@pytest.mark.parametrize("model", ["gpt-40", "my-gpt-4o", "o10", "o1x", "gpt-4x"])
def test_names_that_only_look_like_openai_models_are_not_matched(routed: Start, model: str) -> None:
    assert discover_window(routed({}).url, model).tokens == DEFAULT_WINDOW


def _llama_cpp_python(window: int) -> Answer:
    """As llama-cpp-python's server: max_tokens past the window is cut silently (the model answers); a prompt
    that fills the window is refused, with the message of its error formatter."""
    def answer(request: dict) -> tuple[int, Any]:
        prompt = len(request["messages"][-1]["content"].split()) + 30  # about a token a word, and the template's
        if prompt < window:
            return _chat_answer("Sure! Here is a long story...")
        asked = prompt + request["max_tokens"]
        return 400, {"error": {
            "message": f"This model's maximum context length is {window} tokens. However, you requested {asked} "
                       f"tokens ({prompt} in the messages, {request['max_tokens']} in the completion). Please "
                       "reduce the length of the messages or completion.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}

    return answer


def test_llama_cpp_python_states_its_window_when_the_prompt_cannot_fit(routed: Start) -> None:
    server = routed({"GET /v1/models": _models({"id": MODEL, "object": "model", "owned_by": "me", "permissions": []}),
                     "POST /v1/chat/completions": _llama_cpp_python(4096)})
    started = time.monotonic()
    window = discover_window(server.url, MODEL)
    assert window.tokens == 4096 and "maximum context length is 4096" in window.source
    assert server.paths[-1] == "POST /v1/chat/completions" and time.monotonic() - started < 5


@pytest.mark.parametrize("status, body, tokens", [
    # llama-cpp-python's own words, when its error formatter does not reword them
    (500, {"detail": "Requested tokens (131102) exceed context window of 2048"}, 2048),
    # vLLM behind a proxy that lists no max_model_len: it checks the prompt and max_tokens together
    (400, {"object": "error", "message": "This model's maximum context length is 8192 tokens. However, you "
                                         "requested 10131072 tokens (131072 in the messages, 10000000 in the "
                                         "completion). Please reduce the length of the messages or completion.",
           "type": "BadRequestError", "param": None, "code": 400}, 8192),
])
def test_a_refusal_that_names_the_window(routed: Start, status: int, body: dict, tokens: int) -> None:
    window = discover_window(routed({"POST /v1/chat/completions": (status, body)}).url, MODEL)
    assert window.tokens == tokens and f"{tokens}" in window.source and "refus" in window.source


def test_a_server_that_says_nothing_gets_the_safe_default(routed: Start) -> None:
    server = routed({"GET /v1/models": _models({"id": MODEL, "object": "model"}),
                     "POST /v1/chat/completions": _chat_answer("An answer to a prompt it could read whole.")})
    window = discover_window(server.url, MODEL)
    assert window.tokens == DEFAULT_WINDOW == 4096 and window.guessed
    assert "did not say" in window.source and "--window" in window.source


def test_odd_answers_are_not_errors(routed: Start) -> None:
    page = (200, b"<html><body>Open WebUI</body></html>")
    odd = routed({"GET /props": (200, {"n_ctx": "lots"}), "GET /v1/models": (200, {"data": "none"}),
                  "POST /api/show": page, "POST /v1/chat/completions": page})
    assert discover_window(odd.url, MODEL).tokens == DEFAULT_WINDOW


def test_an_unreachable_server_gets_the_default_at_once() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    window = discover_window(url, MODEL)
    assert window.tokens == DEFAULT_WINDOW and "cannot reach" in window.source and url in window.source
    assert time.monotonic() - started < 3


def test_a_server_that_starts_reading_the_oversized_request_is_left_to_it(routed: Start) -> None:
    def reads_on(request: dict) -> tuple[int, Any]:
        time.sleep(0.6)  # longer than the question's timeout
        return _chat_answer("...")

    server = routed({"GET /v1/models": _models({"id": MODEL}), "POST /v1/chat/completions": reads_on})
    window = discover_window(server.url, MODEL, timeout=0.3)
    assert window.tokens == DEFAULT_WINDOW and "did not say" in window.source  # reached, so not "cannot reach"


def test_the_key_is_sent(routed: Start) -> None:
    seen: list[str | None] = []

    def props(handler: BaseHTTPRequestHandler, request: dict, _: int) -> None:
        seen.append(handler.headers.get("Authorization"))
        reply(handler, 200, json.dumps({"n_ctx": 2048}).encode())

    server = Server(props, get=props)
    try:
        assert discover_window(server.url, MODEL, api_key="sk-local").tokens == 2048
    finally:
        server.close()
    assert seen == ["Bearer sk-local"]


# ---- --window ----------------------------------------------------------------------------------------------------

def test_a_smaller_window_given_is_used(routed: Start) -> None:
    window = discover_window(routed({"GET /props": (200, {"n_ctx": 8192})}).url, MODEL, given=4000)
    assert window.tokens == 4000 and "--window" in window.source and "8192" in window.source


def test_a_larger_window_given_is_capped_by_the_server(routed: Start) -> None:
    window = discover_window(routed({"GET /props": (200, {"n_ctx": 8192})}).url, MODEL, given=16000)
    assert window.tokens == 8192 and "/props" in window.source and "16000" in window.source


def test_the_window_given_stands_when_the_server_says_nothing(routed: Start) -> None:
    assert discover_window(routed({}).url, MODEL, given=6000) == Window(6000, "--window")
    unreachable = discover_window(f"http://127.0.0.1:{free_port()}/v1", MODEL, given=6000)
    assert unreachable == Window(6000, "--window")


# ---- citesum doctor ----------------------------------------------------------------------------------------------

def _llamacpp_like(models: tuple[str, ...] = ("qwen",)) -> Routes:
    """llama.cpp's server: /props, the json_schema form, and timings in every answer."""
    def chat(request: dict) -> tuple[int, Any]:
        if "response_format" in request:
            return _chat_answer('{"colour": "red"}')
        return _chat_answer("1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12", timings={
            "prompt_n": 400, "prompt_ms": 500.0, "prompt_per_second": 800.0,
            "predicted_n": 32, "predicted_ms": 800.0, "predicted_per_second": 40.0})

    return {"GET /v1/models": _models(*({"id": name, "object": "model"} for name in models)),
            "GET /props": (200, {"default_generation_settings": {"n_ctx": 8192}}), "POST /v1/chat/completions": chat}


def _doctor(*arguments: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["doctor", *arguments])
    return result.exit_code, result.stdout, result.stderr


def test_doctor_reports_a_llamacpp_like_server(routed: Start) -> None:
    from citesum.defaults import DEFAULT_BULLETS, DEFAULT_WORDS
    from citesum.summarize import answer_tokens, window_budget

    server = routed(_llamacpp_like())
    code, out, err = _doctor("--base-url", server.url, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["reachable"] is True and report["models"] == ["qwen"] and report["model"] == "qwen"
    assert report["window"]["tokens"] == 8192 and "/props" in report["window"]["source"]
    speed = report["speed"]
    assert (speed["prompt_tokens_per_s"], speed["generation_tokens_per_s"]) == (800.0, 40.0)
    assert "timings" in speed["measured_from"]
    assert report["json_schema"]["form"] == "json_schema" and report["json_schema"]["follows_schema"] is True
    budget = window_budget(8192, bullets=DEFAULT_BULLETS, words=DEFAULT_WORDS, query_tokens=256)
    assert report["budget"]["tokens"] == budget
    answer = answer_tokens(DEFAULT_BULLETS, DEFAULT_WORDS)  # the room the default answer asks for
    assert report["budget"]["answer_tokens"] == answer == 620
    expected = (8192 - answer) / 800.0 + answer / 40.0
    assert report["request_seconds"]["total"] == pytest.approx(expected, rel=0.01)

    code, out, err = _doctor("--base-url", server.url, "--window", "6000")
    assert code == 0, err
    assert out.startswith("| check | result |")
    for words in ("reachable", "qwen", "6000 tokens", "--window", "800", "json_schema", "budget"):
        assert words in out, out


def test_doctor_names_the_json_form_that_works(routed: Start) -> None:
    """llama-cpp-python's server refuses the json_schema form (a 500 naming response_format) and takes
    json_object with a schema; it gives no timings, so speeds come from the token counts and the clock."""
    def chat(request: dict) -> tuple[int, Any]:
        form = request.get("response_format")
        if form and form["type"] == "json_schema":
            return 500, {"error": {"message": "1 validation error: response_format.type: Input should be "
                                              "'text' or 'json_object'"}}
        if form:
            return _chat_answer('{"colour": "blue"}')
        time.sleep(0.05 if request["max_tokens"] == 1 else 0.15)
        return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "1, 2, 3"}}],
                     "usage": {"prompt_tokens": 400, "completion_tokens": request["max_tokens"]}}

    server = routed({"GET /v1/models": _models({"id": "smollm2", "object": "model"}),
                     "POST /v1/chat/completions": chat})
    code, out, err = _doctor("--base-url", server.url, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["json_schema"] == {**report["json_schema"], "form": "json_object", "refused": ["json_schema"],
                                     "follows_schema": True}
    speed = report["speed"]
    assert "wall time" in speed["measured_from"]
    assert 400 / 0.2 < speed["prompt_tokens_per_s"] < 400 / 0.04  # about 400 tokens in 0.05 s
    assert 31 / 0.2 < speed["generation_tokens_per_s"] < 31 / 0.05  # 31 more tokens in about 0.1 s more


def test_doctor_on_an_unreachable_server_exits_1() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, out, err = _doctor("--base-url", url)
    assert code == 1 and err.startswith("error: ") and "cannot reach" in err and url in err

    code, out, err = _doctor("--base-url", url, "--json")
    assert code == 1 and json.loads(out)["reachable"] is False and "cannot reach" in err


def test_doctor_asks_which_model_when_there_are_several(routed: Start) -> None:
    server = routed(_llamacpp_like(models=("qwen", "llama")))
    code, _, err = _doctor("--base-url", server.url)
    assert code == 1 and "--model" in err and "qwen" in err and "llama" in err
    code, out, err = _doctor("--base-url", server.url, "--model", "llama", "--json")
    assert code == 0, err
    assert json.loads(out)["model"] == "llama"
