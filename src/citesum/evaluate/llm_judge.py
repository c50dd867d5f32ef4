"""The LLM coverage judge: our own prompt (one insight and the numbered bullets as JSON in; label and bullet id as
JSON out) through any :class:`~citesum.llm.LLM`, cached like every LLM call."""

from __future__ import annotations

import json
import re
from typing import Sequence

from citesum.errors import ConfigError, LLMError
from citesum.evaluate.judges import LABEL_VALUE
from citesum.evaluate.summhay import Judgment

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

