"""Summarize a packed context with an LLM: render the prompt, call, parse bullets and map citations."""

from __future__ import annotations

import re
import time
from typing import Sequence

from citesum.errors import UnusableOutputError
from citesum.llm.base import LLM, ChatRequest
from citesum.summarize import ANSWER_TOKENS
from citesum.summarize.citations import parse_output
from citesum.summarize.prompts import NO_ANSWER, PromptTemplate, get_template
from citesum.types import Bullet, Context, Summary


def says_no_answer(output: str) -> bool:
    """Whether a model's output opens with NO ANSWER (in any case, as a bullet, in bold, with punctuation): the
    ``cited`` template's way to say that nothing answers; what follows it is not an answer."""
    first = next((line for line in output.splitlines() if line.strip()), "")
    return " ".join(re.sub(r"[^A-Za-z ]", " ", first).split()).upper() == NO_ANSWER


def answering_bullets(query: str, bullets: Sequence[Bullet],
                      context: Context) -> tuple[tuple[Bullet, ...], tuple[Bullet, ...]]:
    """A model's bullets split into those that hold at least one of the question's words (weighted as the
    extractive summarizer weighs them, :func:`~citesum.summarize.extractive.answer_scores`) and those that hold
    none: a bullet about something else answers another question, however true it is. A paraphrase that keeps
    none of the question's words is lost too, so the bar is low on purpose."""
    from citesum.index.lexical import tokenize
    from citesum.summarize.extractive import answer_scores

    scores = answer_scores(query, [frozenset(words) for words in tokenize([b.text for b in bullets])], context.terms)
    kept = tuple(b for b, score in zip(bullets, scores.tolist()) if score > 0)
    return kept, tuple(b for b, score in zip(bullets, scores.tolist()) if score <= 0)


class LLMSummarizer:
    """Prompted LLM summarizer. Output with no usable bullet is retried once (see :meth:`ChatRequest.retry`),
    then reported as an :class:`UnusableOutputError` (an :class:`LLMError`)."""

    name = "llm"

    def __init__(self, llm: LLM, template: str | PromptTemplate = "cited", *, bullets: int = 5,
                 num_words: int = 250, temperature: float = 0.0, seed: int = 0, max_tokens: int = ANSWER_TOKENS,
                 retries_on_bad_output: int = 1, answer_check: bool | None = None) -> None:
        """``answer_check``: leave out the bullets that hold none of the question's words. By default it is on
        with the ``cited`` template, which answers a person's question, and off with the others: the evaluation's
        ``summhay`` protocol scores a model's bullets as it wrote them, and an instruction as the "query" (RAPTOR's
        and ReadAgent's summaries) has no words to hold."""
        self.llm = llm
        self.template = template if isinstance(template, PromptTemplate) else get_template(template)
        self.bullets = bullets
        self.num_words = num_words
        self.request = ChatRequest(messages=(), temperature=temperature, seed=seed, max_tokens=max_tokens)
        self.retries_on_bad_output = retries_on_bad_output
        self.answer_check = self.template.name == "cited" if answer_check is None else answer_check

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
            timings = {"llm_s": round(time.perf_counter() - started, 4)}
            if says_no_answer(completion.text):
                documents = len({block.document_id for block in context.blocks})
                return Summary((), context, prompt=prompt, raw_output=completion.text, usage=dict(completion.usage),
                               timings=timings, summarizer=f"{self.name}:{self.llm.name}", abstained=True,
                               notes=(f"No passage in the {documents} documents that best match the question "
                                      "answers it (the model found none)",))
            parsed = parse_output(completion.text, context.numbers)
            if parsed.bullets:
                bullets, off_topic = (answering_bullets(query, parsed.bullets, context) if self.answer_check
                                      else (parsed.bullets, ()))
                notes = (f"{len(off_topic)} bullet(s) of the model left out: they hold none of the question's "
                         "words",) if off_topic else ()
                return Summary(bullets, context, prompt=prompt, raw_output=completion.text,
                               dropped_citations=parsed.dropped_numbers, usage=dict(completion.usage),
                               timings=timings, summarizer=f"{self.name}:{self.llm.name}", notes=notes,
                               abstained=not bullets)
        shown = " | ".join(repr(o[:80]) for o in outputs)
        raise UnusableOutputError(f"{self.llm.name} returned no usable bullets in {len(outputs)} attempt(s): {shown}")

