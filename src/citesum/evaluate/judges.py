"""Coverage judges: for each reference insight of a summary, a label (FULL / PARTIAL / NO) and the bullet that
covers it.

* ``offline`` / ``offline:<embedder>`` and ``lexical``: no LLM, see :mod:`citesum.evaluate.offline`;
* ``llm``: our own prompt through any :class:`~citesum.llm.LLM`, see :mod:`citesum.evaluate.llm_judge`.

How well a judge agrees with human labels is measured by :mod:`citesum.evaluate.meta`.
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence

from citesum.errors import ConfigError, unknown_name_error
from citesum.evaluate.summhay import Coverage, Judgment

LABEL_VALUE: dict[Coverage, float] = {"FULL": 1.0, "PARTIAL": 0.5, "NO": 0.0}
HUMAN_LABELS: dict[str, Coverage] = {"fully_covered": "FULL", "partially_covered": "PARTIAL", "not_covered": "NO"}
_MARKUP = re.compile(r"[*#]+")


class Judge(Protocol):
    name: str

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        """``insights`` are (id, text); bullet ids in the result are 1-based positions in ``bullets``."""
        ...


def judged_text(bullet: str) -> str:
    """What the judges compare of a bullet: what it says, not what it cites ("[12]" must not match a figure "12"
    of the insight), without Markdown emphasis ("**" would be a token of its own)."""
    from citesum.summarize.citations import strip_citations

    return _MARKUP.sub(" ", strip_citations(bullet))


def get_judge(name: str, **options: object) -> Judge:
    if name == "offline" or name.startswith("offline:"):
        from citesum.evaluate.offline import OfflineJudge

        return OfflineJudge(name.split(":", 1)[1] if ":" in name else "minilm")
    if name == "lexical":
        from citesum.evaluate.offline import LexicalJudge

        return LexicalJudge()
    if name == "llm":
        if options.get("llm") is None:
            raise ConfigError("the 'llm' judge needs a model (--model and --base-url of an OpenAI-compatible server)")
        from citesum.evaluate.llm_judge import LLMJudge

        return LLMJudge(options["llm"])
    raise unknown_name_error("judge", name, ["offline", "offline:<embedder>", "lexical", "llm"])
