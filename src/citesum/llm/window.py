"""The context window of the model behind an OpenAI-compatible server, asked of the server itself.

A server started with a small context refuses any request longer than its window, so citesum fits its budgets to
the window, and asks the server for it. Each kind of server tells it its own way; they are asked in turn, the first
answer winning:

1. llama.cpp's server: ``GET {root}/props``, ``default_generation_settings.n_ctx`` (one slot's window);
2. vLLM (and servers that copy its model list): ``GET {base}/models``, the model's ``max_model_len``;
3. Ollama: ``POST {root}/api/show``, ``num_ctx`` in the model's ``parameters``; without it Ollama runs the model at
   its default context, whatever the model was trained for;
4. OpenAI's published windows, by model name;
5. any other server (llama-cpp-python's has none of the above): a chat request that cannot fit, which servers
   refuse, naming their window, before they evaluate it.

``root`` is the server's address (``base`` without its trailing ``/v1``). Nothing here raises for a server that
cannot be reached or answers oddly: the window falls back to ``--window``, else to :data:`DEFAULT_WINDOW`, and the
:attr:`Window.source` says why.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from citesum.errors import MissingExtraError
from citesum.llm.base import LLM
from citesum.llm.openai_compat import OpenAIChat, context_too_long


@dataclass(frozen=True)
class Window:
    """A model's context window in tokens, and where that number came from (said to the user)."""

    tokens: int
    source: str
    #: a default, not what the server runs the model with (Ollama without num_ctx, nothing said): ``--window``
    #: replaces it, where it only caps a window the server gave
    guessed: bool = False


#: the window assumed when neither the server nor the user says: small enough for any server citesum meets
DEFAULT_WINDOW = 4096
#: the context Ollama runs a model at when its parameters set no num_ctx (on machines with a small GPU or none;
#: larger ones may get more, so this is the safe reading)
OLLAMA_DEFAULT_CONTEXT = 4096

#: OpenAI's published context windows by model name; a dated snapshot (gpt-4o-2024-08-06) has its model's window
OPENAI_WINDOWS = {
    "gpt-4.1": 1_047_576, "gpt-4.1-mini": 1_047_576, "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000, "gpt-4o-mini": 128_000, "chatgpt-4o-latest": 128_000,
    "gpt-4-turbo": 128_000, "gpt-4-0125-preview": 128_000, "gpt-4-1106-preview": 128_000,
    "gpt-4": 8192, "gpt-4-32k": 32_768,
    "gpt-3.5-turbo": 16_385, "gpt-3.5-turbo-instruct": 4096,
    "o1": 200_000, "o1-pro": 200_000, "o1-mini": 128_000, "o1-preview": 128_000,
    "o3": 200_000, "o3-pro": 200_000, "o3-mini": 200_000, "o4-mini": 200_000,
}

#: words of the request that cannot fit. llama-cpp-python cuts an oversized max_tokens silently and answers; it
#: refuses only a prompt longer than its window, which it finds out by tokenizing, before evaluating anything. A
#: server whose window is larger than this would start reading the prompt: the question gives up after its
#: ``timeout`` (the server may read on).
OVERSIZED_PROMPT_WORDS = 2**17
#: max_tokens of that request: one token, so that a server that cuts the prompt instead of refusing it writes
#: no more than that
OVERSIZED_ANSWER_TOKENS = 1


@dataclass(frozen=True)
class _Server:
    client: Any  # httpx.Client
    base: str
    root: str
    model: str


def discover_window(base_url: str, model: str, *, given: int | None = None, timeout: float = 5.0,
                    api_key: str | None = None) -> Window:
    """The window of ``model`` at the OpenAI-compatible ``base_url`` (e.g. ``http://127.0.0.1:8080/v1``), asked
    of the server (see the module's doc); with ``given`` (``--window``), the smaller of the two. ``timeout``:
    seconds for each question; ``api_key`` is sent as a bearer token."""
    found, unreachable = _ask(base_url.rstrip("/"), model, timeout, api_key)
    return _settle(found, given, base_url, unreachable)


def _ask(base: str, model: str, timeout: float, api_key: str | None) -> tuple[Window | None, str | None]:
    """The window the server or the model's name tells (None: neither), and why the server could not be asked
    (None: it was)."""
    try:
        import httpx
    except ImportError as exc:
        raise MissingExtraError("asking an LLM server its window", "openai", "httpx") from exc
    root = base.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=timeout, headers=headers) as client:
        server = _Server(client, base, root, model)
        try:
            return _ask_server(server), None
        except (httpx.ConnectError, httpx.TimeoutException) as exc:
            # every other question would fail the same way, each after its timeout
            return _openai_published(model), f"{type(exc).__name__}: {exc}".rstrip(": ")


def _ask_server(server: _Server) -> Window | None:
    if urlsplit(server.base).hostname == "api.openai.com":  # its models are in the table; it has no other routes
        return _openai_published(server.model)
    for ask in (_llamacpp_props, _vllm_models, _ollama_show):
        if found := _answer_of(ask, server):
            return found
    if found := _openai_published(server.model):
        return found
    # the over-long request only to a server of this machine or its network: a hosted one could bill it, and a
    # single-slot local one that cuts prompts silently would be busy with it for a while
    return _answer_of(_refused_request, server) if _nearby(server.base) else None


def _nearby(url: str) -> bool:
    """Whether ``url``'s host is this machine or a private network's (a name that is not an address: no)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _answer_of(ask: Callable[[_Server], Window | None], server: _Server) -> Window | None:
    """What ``ask`` found; None for a server that answered with something else than it expects (or dropped the
    connection). A server that cannot be reached, or did not answer in time, is left to the caller."""
    import httpx

    try:
        return ask(server)
    except (httpx.ConnectError, httpx.TimeoutException):
        raise
    except httpx.HTTPError:
        return None


def _json(response: Any) -> Any:
    """The JSON body of a successful answer, else None (an error, or a web page served for every path)."""
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _field(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _tokens(value: Any) -> int | None:
    """``value`` when it is a window: a positive whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _llamacpp_props(server: _Server) -> Window | None:
    props = _json(server.client.get(f"{server.root}/props"))
    tokens = _tokens(_field(props, "default_generation_settings", "n_ctx")) or _tokens(_field(props, "n_ctx"))
    return Window(tokens, "llama.cpp server /props n_ctx") if tokens else None


def _vllm_models(server: _Server) -> Window | None:
    entries = _field(_json(server.client.get(f"{server.base}/models")), "data")
    for entry in entries if isinstance(entries, list) else ():
        if _field(entry, "id") == server.model and (tokens := _tokens(_field(entry, "max_model_len"))):
            return Window(tokens, "vLLM /v1/models max_model_len")
    return None


def _ollama_show(server: _Server) -> Window | None:
    # "name" too: Ollama before "model" was added reads only that
    shown = _json(server.client.post(f"{server.root}/api/show", json={"model": server.model, "name": server.model}))
    if not isinstance(shown, dict) or not ({"parameters", "model_info", "modelfile"} & shown.keys()):
        return None
    parameters = shown.get("parameters")
    num_ctx = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE) if isinstance(parameters, str) else None
    if num_ctx and (tokens := _tokens(int(num_ctx.group(1)))):
        return Window(tokens, "Ollama /api/show num_ctx")
    trained = _trained_length(shown.get("model_info"))
    tokens = min(OLLAMA_DEFAULT_CONTEXT, trained or OLLAMA_DEFAULT_CONTEXT)
    trained_note = f"the model was trained for {trained} tokens; " if trained else ""
    return Window(tokens, f"Ollama /api/show: no num_ctx, so Ollama's default context of {tokens} ({trained_note}a "
                          "server started with OLLAMA_CONTEXT_LENGTH runs it with that: give it as --window)",
                  guessed=True)


def _trained_length(model_info: Any) -> int | None:
    """The context the model was trained for, from Ollama's ``model_info`` (``<architecture>.context_length``)."""
    if not isinstance(model_info, dict):
        return None
    return next((_tokens(value) for key, value in model_info.items() if key.endswith(".context_length")), None)


def _openai_published(model: str) -> Window | None:
    name = model.rsplit("/", 1)[-1]  # "openai/gpt-4o" through a router
    # the longest listed name that is the model's or begins it before a "-": gpt-4-turbo-2024-04-09 is
    # gpt-4-turbo's, gpt-4o is not gpt-4's
    matches = [listed for listed in OPENAI_WINDOWS if name == listed or name.startswith(listed + "-")]
    if not matches:
        return None
    listed = max(matches, key=len)
    return Window(OPENAI_WINDOWS[listed], f"OpenAI's published window for {listed}")


def _refused_request(server: _Server) -> Window | None:
    import httpx

    try:
        response = server.client.post(f"{server.base}/chat/completions", json={
            "model": server.model, "messages": [{"role": "user", "content": " a" * OVERSIZED_PROMPT_WORDS}],
            "max_tokens": OVERSIZED_ANSWER_TOKENS, "temperature": 0.0})
    except httpx.TimeoutException:
        return None  # the server took the request: its window is larger than the prompt, or it is slow to refuse
    if response.status_code < 400:
        return None
    too_long = context_too_long(response.text)
    tokens = _tokens(too_long[0]) if too_long else None
    if not tokens:
        return None
    return Window(tokens, f"the server's refusal of a request longer than any window: {_error_message(response)}")


def _error_message(response: Any) -> str:
    """The first sentence of an error answer's message (OpenAI's ``error.message``, FastAPI's ``detail``, or the
    body), quoted and at most about a line long."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = _field(body, "error", "message") or _field(body, "detail") or _field(body, "message")
    text = message if isinstance(message, str) else response.text
    sentence = text.split(". ", 1)[0].strip()
    return repr(sentence if len(sentence) <= 120 else sentence[:117] + "...")


def _settle(found: Window | None, given: int | None, base_url: str, unreachable: str | None) -> Window:
    """The window to use, from what was found and ``--window`` (which caps what the server said, and replaces a
    guess)."""
    if found is not None and found.guessed and given is not None:
        return Window(given, f"--window (in place of a guess: {found.source})")
    if found is not None and given is not None:
        if given <= found.tokens:
            return Window(given, f"--window (the server's window is {found.tokens}: {found.source})")
        return Window(found.tokens, f"{found.source} (--window {given} is more than the server's window)")
    if found is not None:
        return found
    if given is not None:
        return Window(given, "--window")
    why = f"cannot reach {base_url} ({unreachable})" if unreachable else "the server did not say"
    return Window(DEFAULT_WINDOW, f"{why}: a safe default; give --window N with the context the server runs the "
                                  "model with", guessed=True)


def fit_to_server(llm: LLM, given: int | None = None) -> Window:
    """Set ``llm``'s window from its server (an OpenAI-compatible one: :func:`discover_window`) or from what
    runs it here (llama.cpp in this process: its ``n_ctx``), ``given`` (``--window``) capping it; the window
    and where it came from are kept on ``llm`` (``context_window``, ``context_window_source``) and returned."""
    if isinstance(llm, OpenAIChat):
        found = discover_window(llm.base_url, llm.model, given=given, api_key=os.environ.get(llm.api_key_env))
    elif llm.context_window is not None:
        tokens = llm.context_window if given is None else min(given, llm.context_window)
        found = Window(tokens, "the model's context as loaded here (n_ctx)" + (" and --window" if given else ""))
    else:
        found = Window(given or DEFAULT_WINDOW, "--window" if given else "a safe default: give --window N")
    llm.context_window, llm.context_window_source = found.tokens, found.source
    return found
