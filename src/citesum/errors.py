"""citesum's exception hierarchy; lower-level errors are mapped into it at the edges."""

from __future__ import annotations


class CitesumError(Exception):
    """Base class of every error citesum raises on purpose."""


class ConfigError(CitesumError):
    """An unknown strategy name, a bad option value or a missing optional dependency."""


class MissingExtraError(ConfigError):
    """An optional backend was requested but its extra is not installed."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            f"{what} needs the optional dependency '{module}', which is not installed. "
            f"Install it with: pip install 'citesum[{extra}]' (in a clone of citesum's repository: "
            f"pip install -e '.[{extra}]')"
        )
        self.extra = extra
        self.module = module
        self._what = what

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:  # crosses process boundaries (service workers)
        return (type(self), (self._what, self.extra, self.module))


class IngestError(CitesumError):
    """A file or record could not be turned into documents (the reason is user-facing)."""


class UnreadableError(IngestError):
    """A file that could not be read this time (corrupt or locked, perhaps still being written), as opposed to
    one that holds no text: ``index --sync`` keeps what it gave before."""


class IndexStoreError(CitesumError):
    """The index directory is missing, corrupt or incompatible."""


class IndexLockedError(IndexStoreError):
    """Another process is writing to the index."""


class IndexMismatchError(IndexStoreError):
    """The index was built with another embedder, tokenizer or schema version."""


class BudgetError(CitesumError):
    """A token budget that cannot hold what it must (the prompt, the answer, or any context)."""


class LLMError(CitesumError):
    """An LLM call failed after its retries, or returned output that could not be used."""


class ContextTooLong(LLMError):
    """The server refused a request longer than its model's window. ``window`` and ``requested`` are the token
    counts its message gave (in its model's tokens), when it gave them; ``with_answer``: ``requested`` counts the
    answer's tokens (``max_tokens``) besides the prompt's."""

    def __init__(self, message: str, window: int | None = None, requested: int | None = None,
                 with_answer: bool = True) -> None:
        super().__init__(message)
        self.window = window
        self.requested = requested
        self.with_answer = with_answer


class LLMTimeout(LLMError):
    """The model did not answer within the request's time limit; the call was cancelled (its connection closed,
    so the server stops working on it)."""


class LLMCancelled(LLMError):
    """The request that made the call was given up (its client left); the call was cancelled."""


class UnusableOutputError(LLMError):
    """The LLM answered, but nothing in its answers could be used (after the retries for bad output)."""


def unknown_name_error(kind: str, name: str, valid: list[str]) -> ConfigError:
    """Error for a registry lookup that failed, listing the valid names."""
    return ConfigError(f"unknown {kind} '{name}'; choose one of: {', '.join(sorted(valid))}")
