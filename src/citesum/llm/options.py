"""Which LLM to use, as one value: every front end (``summarize``, ``serve``, ``tree``, ``eval``) builds its model
from :class:`LLMOptions`, in :meth:`LLMOptions.build`, and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from citesum.llm.base import LLM

Backend = Literal["openai", "llamacpp"]


@dataclass(frozen=True)
class LLMOptions:
    """An LLM: an OpenAI-compatible server's model, or a GGUF file run by llama.cpp in this process."""

    backend: Backend = "openai"
    #: the server's model name (``openai``), or a GGUF path (``llamacpp``; default: the packaged SmolLM2)
    model: str | None = None
    #: the server's base URL(s); several (or ``@FILE``) make a pool of replicas of the same model
    base_url: tuple[str, ...] = ()
    api_key_env: str = "OPENAI_API_KEY"
    #: seconds the server may stay silent (to connect, or between two parts of an answer)
    timeout: float = 120.0
    #: read and write the response cache (answers to the same request are not asked again)
    cache: bool = True
    #: the model's context window when its server does not say (a smaller one caps what it says); for
    #: ``llamacpp``, the window it is loaded with
    window: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.base_url, str):  # one URL given as such
            object.__setattr__(self, "base_url", (self.base_url,))
        elif self.base_url is None:
            object.__setattr__(self, "base_url", ())
        else:
            object.__setattr__(self, "base_url", tuple(self.base_url))

    def build(self) -> LLM | None:
        """The model, or None when no model is named (the offline path)."""
        from citesum.llm import ResponseCache, get_llm

        if self.backend == "llamacpp":
            return get_llm("llamacpp", self.model, **({"n_ctx": self.window} if self.window else {}))
        if not self.model:
            return None
        return get_llm("openai", self.model, base_url=self.base_url or None,
                       cache=ResponseCache() if self.cache else None, api_key_env=self.api_key_env,
                       timeout=self.timeout)

    def build_fitted(self) -> LLM | None:
        """:meth:`build`, with the model's context window asked of its server (or taken from how it is loaded),
        ``window`` capping it: what a summarizer needs to fit its prompts."""
        from citesum.llm.window import fit_to_server

        llm = self.build()
        if llm is not None:
            fit_to_server(llm, self.window)
        return llm
