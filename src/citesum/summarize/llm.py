"""Summarize a packed context with an LLM: render the prompt, call, parse bullets and map citations."""

from __future__ import annotations

import time

from citesum.errors import UnusableOutputError
from citesum.llm.base import LLM, ChatRequest
from citesum.summarize import ANSWER_TOKENS
from citesum.summarize.citations import parse_output
from citesum.summarize.prompts import PromptTemplate, get_template
from citesum.types import Context, Summary


class LLMSummarizer:
    """Prompted LLM summarizer. Output with no usable bullet is retried once (see :meth:`ChatRequest.retry`),
    then reported as an :class:`UnusableOutputError` (an :class:`LLMError`)."""

    name = "llm"

    def __init__(self, llm: LLM, template: str | PromptTemplate = "summhay", *, bullets: int = 5,
                 num_words: int = 250, temperature: float = 0.0, seed: int = 0, max_tokens: int = ANSWER_TOKENS,
                 retries_on_bad_output: int = 1) -> None:
        self.llm = llm
        self.template = template if isinstance(template, PromptTemplate) else get_template(template)
        self.bullets = bullets
        self.num_words = num_words
        self.request = ChatRequest(messages=(), temperature=temperature, seed=seed, max_tokens=max_tokens)
        self.retries_on_bad_output = retries_on_bad_output

    def prompt(self, query: str, context: Context) -> str:
        return self.template.render(context=context.render(), query=query, bullets=self.bullets,
                                    num_words=self.num_words)

    def summarize(self, query: str, context: Context) -> Summary:
        prompt = self.prompt(query, context)
        started = time.perf_counter()
        outputs = []
        request = ChatRequest.from_prompt(prompt, temperature=self.request.temperature, seed=self.request.seed,
                                          max_tokens=self.request.max_tokens)
        for attempt in range(self.retries_on_bad_output + 1):
            completion = self.llm.complete(request.retry(attempt) if attempt else request)
            outputs.append(completion.text)
            parsed = parse_output(completion.text, context.numbers)
            if parsed.bullets:
                return Summary(parsed.bullets, context, prompt=prompt, raw_output=completion.text,
                               dropped_citations=parsed.dropped_numbers, usage=dict(completion.usage),
                               timings={"llm_s": round(time.perf_counter() - started, 4)},
                               summarizer=f"{self.name}:{self.llm.name}")
        shown = " | ".join(repr(o[:80]) for o in outputs)
        raise UnusableOutputError(f"{self.llm.name} returned no usable bullets in {len(outputs)} attempt(s): {shown}")

