"""Summarize a packed context with an LLM: render the prompt, call, parse bullets and map citations."""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace
from typing import Iterator, Sequence

from citesum.errors import ContextTooLong, LLMError, UnusableOutputError
from citesum.llm.base import LLM, ChatRequest
from citesum.pack import shrunk
from citesum.summarize import answer_tokens, fit_budget, prompt_room
from citesum.summarize.citations import has_bullet_lines, parse_output
from citesum.summarize.extractive import context_respellings, nothing_answers, slips_read, written_as
from citesum.summarize.prompts import NO_ANSWER, PromptTemplate, get_template
from citesum.tokens import get_tokenizer
from citesum.types import Bullet, Context, Summary

#: prompts (in citesum's tokens) from which the model's tokens per token of ours are learnt: in a shorter one the
#: chat template's few dozen tokens weigh too much
RATIO_MIN_PROMPT = 1000


def says_no_answer(output: str) -> bool:
    """Whether a model's output opens with NO ANSWER (in any case, as a bullet, in bold, with punctuation): the
    ``cited`` template's way to say that nothing answers; what follows it is not an answer."""
    first = next((line for line in output.splitlines() if line.strip()), "")
    return " ".join(re.sub(r"[^A-Za-z ]", " ", first).split()).upper() == NO_ANSWER


def read_as_searched(query: str, context: Context) -> tuple[str, tuple[str, ...]]:
    """``query`` with its words written as the collection writes them (:func:`context_respellings`: "colour" as
    "color", the slip "confirmaton" as "confirmation"), for the model and the answer check to see the words the
    documents write, and the note that tells the asker which slips were read (:func:`slips_read`)."""
    written = context_respellings(query, context)
    return written_as(query, written), slips_read(query, written)


def answering_bullets(query: str, bullets: Sequence[Bullet],
                      context: Context) -> tuple[tuple[Bullet, ...], tuple[Bullet, ...]]:
    """A model's bullets split into those that hold at least one of the question's words (weighted as the
    extractive summarizer weighs them, :func:`~citesum.summarize.extractive.answer_scores`) and those that hold
    none: a bullet about something else answers another question, however true it is. A paraphrase that keeps
    none of the question's words is lost too, so the bar is low on purpose."""
    from citesum.summarize.extractive import answer_scores, sentence_terms

    scores = answer_scores(query, sentence_terms([b.text for b in bullets]), context.terms)
    kept = tuple(b for b, score in zip(bullets, scores.tolist()) if score > 0)
    return kept, tuple(b for b, score in zip(bullets, scores.tolist()) if score <= 0)


class LLMSummarizer:
    """Prompted LLM summarizer. Output with no usable bullet is retried once (see :meth:`ChatRequest.retry`),
    then reported as an :class:`UnusableOutputError` (an :class:`LLMError`)."""

    name = "llm"

    def __init__(self, llm: LLM, template: str | PromptTemplate = "cited", *, bullets: int = 5,
                 num_words: int = 250, temperature: float = 0.0, seed: int = 0, max_tokens: int | None = None,
                 retries_on_bad_output: int = 1, answer_check: bool | None = None) -> None:
        """``max_tokens``: the answer's tokens, by default what ``bullets`` and ``num_words`` take
        (:func:`~citesum.summarize.answer_tokens`); an answer cut off there loses its last, cut bullet.
        ``answer_check``: leave out the bullets that hold none of the question's words. By default it is on
        with the ``cited`` template, which answers a person's question, and off with the others: the evaluation's
        ``summhay`` protocol scores a model's bullets as it wrote them, and an instruction as the "query" (RAPTOR's
        and ReadAgent's summaries) has no words to hold."""
        self.llm = llm
        self.template = template if isinstance(template, PromptTemplate) else get_template(template)
        self.bullets = bullets
        self.num_words = num_words
        self.request = ChatRequest(messages=(), temperature=temperature, seed=seed,
                                   max_tokens=max_tokens or answer_tokens(bullets, num_words))
        self.retries_on_bad_output = retries_on_bad_output
        self.answer_check = self.template.name == "cited" if answer_check is None else answer_check

    def prompt(self, query: str, context: Context) -> str:
        return self.template.render(context=context.render(), query=query, bullets=self.bullets,
                                    num_words=self.num_words)

    def summarize(self, query: str, context: Context) -> Summary:
        """The summary of ``context``, cut first to what the model's window holds beside the prompt and the
        answer; a server that still finds the request too long gets it once more, cut to what its numbers say.
        Either cut is said in the summary's notes: the budget was citesum's choice, not the user's mistake. The
        question is asked as the search read it (:func:`read_as_searched`)."""
        query, read = read_as_searched(query, context)
        fitted = self._fitted(query, context)
        try:
            summary = self._summarize(query, fitted, self._cut_note(context, fitted))
        except ContextTooLong as refused:
            smaller = self._refitted(query, fitted, refused)
            summary = self._summarize(query, smaller, self._cut_note(context, smaller))
        return replace(summary, notes=(*summary.notes, *read)) if read else summary

    def _prompt_tokens(self, query: str, context: Context) -> int:
        return get_tokenizer().count(self.prompt(query, context))

    def _fitted(self, query: str, context: Context) -> Context:
        """``context`` cut so that the prompt (in the model's tokens, at the ratio seen so far) and the answer fit
        the model's window, when it is known."""
        window = self.llm.context_window
        if window is None:
            return context
        over = self._prompt_tokens(query, context) - self._room(window, self.llm.prompt_token_ratio or 1.0)
        return context if over <= 0 else self._cut(context, context.token_count - math.ceil(over))

    def _refitted(self, query: str, context: Context, refused: ContextTooLong) -> Context:
        """``context`` cut to what the server's refusal says its window holds (its window and the tokens it
        counted), or to half without numbers; what it said is kept for the next requests."""
        if refused.requested is None:
            if refused.window is not None and refused.window < (self.llm.context_window or refused.window + 1):
                self.llm.context_window = refused.window  # a window it had not said, or smaller than it said
                fitted = self._fitted(query, context)
                if fitted is not context:
                    return fitted
            return self._cut(context, context.token_count // 2, refused)
        if refused.window is None:
            return self._cut(context, context.token_count // 2, refused)
        ours = self._prompt_tokens(query, context)
        theirs = refused.requested - (self.request.max_tokens if refused.with_answer else 0)
        ratio = max(theirs / max(ours, 1), 0.1)
        self.llm.prompt_token_ratio = max(self.llm.prompt_token_ratio or 0.0, ratio)
        self.llm.context_window = min(self.llm.context_window or refused.window, refused.window)
        room = self._room(refused.window, ratio)
        return self._cut(context, context.token_count - math.ceil(ours - room), refused)

    def _room(self, window: int, ratio: float) -> float:
        """The prompt's room in a ``window``-token window beside the answer, in citesum's tokens (the model
        counts ``ratio`` of its own per one of ours), less the slack."""
        return prompt_room(window, self.request.max_tokens, ratio)

    def context_budget(self, query: str, budget: int) -> int:
        """``budget``, or the smaller context budget that the model's window (when known) holds beside this
        query's prompt and the answer: what the pipeline packs, so that :meth:`summarize` has nothing to cut."""
        empty = Context(blocks=(), order="original", budget=1, token_count=0)
        return fit_budget(budget, self.llm.context_window, self._prompt_tokens(query, empty), self.request.max_tokens,
                          self.llm.prompt_token_ratio or 1.0)

    @staticmethod
    def _cut(context: Context, budget: int, refused: LLMError | None = None) -> Context:
        if budget < 1:
            raise LLMError(f"the model's window cannot hold the prompt without any context and the answer "
                           f"({refused or 'ask for a shorter answer, or use a model with a larger window'})")
        return shrunk(context, budget)

    @staticmethod
    def _cut_note(given: Context, fitted: Context) -> tuple[str, ...]:
        if fitted is given:
            return ()
        return (f"The context was cut from {given.token_count:,} to {fitted.token_count:,} tokens to fit the "
                "model's window beside the prompt and the answer",)

    def _learn(self, query: str, context: Context, usage: dict[str, int]) -> None:
        """Keep how many tokens the model counted in this prompt per token of citesum's (the largest seen), from
        prompts long enough that the chat template's own tokens do not inflate it."""
        prompt_tokens = usage.get("prompt_tokens")
        ours = self._prompt_tokens(query, context)
        if prompt_tokens and ours >= RATIO_MIN_PROMPT:
            self.llm.prompt_token_ratio = max(self.llm.prompt_token_ratio or 0.0, prompt_tokens / ours)

    def _summarize(self, query: str, context: Context, notes: tuple[str, ...]) -> Summary:
        summary = self._summarize_fitted(query, context)
        self._learn(query, context, dict(summary.usage))
        return replace(summary, notes=(*notes, *summary.notes)) if notes else summary

    def _summarize_fitted(self, query: str, context: Context) -> Summary:
        prompt = self.prompt(query, context)
        started = time.perf_counter()
        outputs = []
        request = self._request(prompt)
        for attempt in range(self.retries_on_bad_output + 1):
            completion = self.llm.complete(request.retry(attempt) if attempt else request)
            # a cached answer says nothing of the model's pace: it came at once
            usage = {**completion.usage, **({"cached": 1} if completion.cached else {})}
            outputs.append(completion.text)
            summary = self._summary_of(query, context, prompt, completion.text, usage,
                                       {"llm_s": round(time.perf_counter() - started, 4)})
            if summary is not None:
                return summary
        shown = " | ".join(repr(o[:80]) for o in outputs)
        raise UnusableOutputError(f"{self.llm.name} returned no usable bullets in {len(outputs)} attempt(s): {shown}")

    def _request(self, prompt: str) -> ChatRequest:
        return ChatRequest.from_prompt(prompt, temperature=self.request.temperature, seed=self.request.seed,
                                       max_tokens=self.request.max_tokens)

    def _summary_of(self, query: str, context: Context, prompt: str, output: str, usage: dict[str, int],
                    timings: dict[str, float]) -> Summary | None:
        """The summary of one output of the model: its abstention (``NO ANSWER``), its bullets that answer, or
        None when it holds no usable bullet."""
        name = f"{self.name}:{self.llm.name}"
        if says_no_answer(output):
            return Summary((), context, prompt=prompt, raw_output=output, usage=usage, timings=timings,
                           summarizer=name, abstained=True, notes=(f"{nothing_answers(context)} (the model found none)",))
        parsed = parse_output(output, context.numbers)
        # an answer that filled its tokens was cut off: its last bullet stops mid-way (or is what a small model
        # rambled on with past the bullets asked)
        cut = usage.get("completion_tokens", 0) >= self.request.max_tokens and bool(parsed.bullets)
        written = parsed.bullets[:-1] if cut else parsed.bullets
        if not written:
            return None
        answering, off_topic = self._answering(query, written, context)
        bullets = self._kept(answering)
        notes = []
        if off_topic:
            notes.append(f"{len(off_topic)} bullet(s) of the model left out: they hold none of the question's words")
        if cut:
            notes.append(f"the model's last bullet was left out: the answer was cut off at its "
                         f"{self.request.max_tokens} tokens (raise --max-tokens)")
        if len(bullets) < len(answering):
            notes.append(f"the model wrote {len(answering)} bullets that answer; the first {len(bullets)} are kept, "
                         "as asked")
        return Summary(bullets, context, prompt=prompt, raw_output=output, dropped_citations=parsed.dropped_numbers,
                       usage=usage, timings=timings, summarizer=name, notes=tuple(notes), abstained=not bullets)

    def _answering(self, query: str, bullets: Sequence[Bullet],
                   context: Context) -> tuple[tuple[Bullet, ...], tuple[Bullet, ...]]:
        return answering_bullets(query, bullets, context) if self.answer_check else (tuple(bullets), ())

    def _kept(self, bullets: Sequence[Bullet]) -> tuple[Bullet, ...]:
        """The first ``bullets`` of the model's answering bullets, when the template asks for at most that many
        (``cited``); a small model writes on past the count asked. The other templates' counts are the
        evaluation's or a length in words, and their bullets are kept as written."""
        return tuple(bullets[: self.bullets] if self.template.name == "cited" else bullets)

    def stream(self, query: str, context: Context) -> Iterator[Bullet | Summary]:
        """The bullets as the model completes them (a bullet line whose end has come; those that hold none of
        the question's words are left out, as :meth:`summarize` leaves them), then the whole :class:`Summary`,
        the same as :meth:`summarize` makes of the same output. An output with no usable bullet is asked again
        whole, as :meth:`summarize` asks it."""
        query, read = read_as_searched(query, context)
        for piece in self._stream_refitted(query, context):
            yield replace(piece, notes=(*piece.notes, *read)) if read and isinstance(piece, Summary) else piece

    def _stream_refitted(self, query: str, context: Context) -> Iterator[Bullet | Summary]:
        fitted = self._fitted(query, context)
        try:
            yield from self._stream_fitted(query, fitted, self._cut_note(context, fitted))
        except ContextTooLong as refused:  # refused before any piece was written
            smaller = self._refitted(query, fitted, refused)
            yield from self._stream_fitted(query, smaller, self._cut_note(context, smaller))

    def _stream_fitted(self, query: str, context: Context, notes: tuple[str, ...]) -> Iterator[Bullet | Summary]:
        prompt = self.prompt(query, context)
        started = time.perf_counter()
        usage: dict[str, int] = {}
        output = ""
        sent: list[str] = []  # the texts of the bullets given so far
        for piece in self.llm.stream(self._request(prompt), usage):
            output += piece
            if "\n" not in piece:
                continue
            ended = output[:output.rindex("\n")]  # the lines written whole: the last one may be half-written
            if says_no_answer(ended) or not has_bullet_lines(ended):
                continue  # an abstention, or a preamble before any bullet: nothing to give yet
            for bullet in self._kept(self._answering(query, parse_output(ended, context.numbers).bullets, context)[0]):
                if bullet.text not in sent:
                    sent.append(bullet.text)
                    yield bullet
        summary = self._summary_of(query, context, prompt, output, usage,
                                   {"llm_s": round(time.perf_counter() - started, 4)})
        if summary is None:  # no usable bullet: asked again, whole, as summarize asks
            summary = self._summarize_fitted(query, context)
        yield from (bullet for bullet in summary.bullets if bullet.text not in sent)  # the last line, or the rest
        self._learn(query, context, dict(summary.usage))
        yield replace(summary, notes=(*notes, *summary.notes)) if notes else summary

