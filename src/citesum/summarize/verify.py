"""Citation verification and repair with evidence spans.

For a bullet, every sentence of the candidate documents gets a support score,

    support = mix * cosine(bullet, sentence) + (1 - mix) * IDF-weighted share of the bullet's keywords in it,

and a document's support is that of its best sentence (the evidence span, with character offsets). A
citation is *supported* when its document's support reaches ``relative_threshold`` x the best support of any
candidate document, and that best support is at least ``min_support`` (else the bullet states nothing the
documents state and gets no citation); repair keeps exactly the supported documents (dropping unsupported
citations, adding supporting documents that were not cited). Raising ``relative_threshold`` trades recall for
precision.

Free parameters: ``mix`` and ``relative_threshold``, chosen held out on the SummHay news haystacks
(:data:`DEFAULT_MIX`, :data:`DEFAULT_RELATIVE_THRESHOLD` say how); ``min_support`` only silences
non-statements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from citesum.chunking import sentence_spans
from citesum.embed import Embedder, get_embedder
from citesum.errors import ConfigError
from citesum.index.lexical import document_frequency, keyword_overlap, tokenize
from citesum.summarize.citations import strip_citations
from citesum.llm.base import LLM
from citesum.types import Bullet, Context, Document, Summary

#: Chosen on held-out splits (benchmarks/citation_repair_held_out.py): over a grid, the setting with the best
#: mean joint of the stored systems on two SummHay news haystacks, scored on the third. Every one of the three
#: choices is this one, so each haystack's repair figures with it are held out (docs/measurements.md).
DEFAULT_MIX = 0.4
DEFAULT_RELATIVE_THRESHOLD = 0.6
#: a bullet whose best sentence supports it less than this states nothing the documents state (a preamble,
#: a heading, an opinion): it gets no citation at all
DEFAULT_MIN_SUPPORT = 0.3

CONFIRM_PROMPT = """Statement: {statement}

Passage: {evidence}

Does the passage state what the statement says (or part of it)? Answer with one word: yes or no."""


@dataclass(frozen=True)
class Evidence:
    """The sentence that best supports a bullet in one document."""

    document_id: str
    support: float
    char_start: int
    char_end: int
    text: str


@dataclass(frozen=True)
class CitationCheck:
    document_id: str
    supported: bool
    evidence: Evidence | None  # None for a citation to a document that is not in the collection


@dataclass(frozen=True)
class VerifiedBullet:
    text: str
    checks: tuple[CitationCheck, ...]  # one per original citation
    citations: tuple[str, ...]  # after repair: the supported documents, best supported first
    evidence: tuple[Evidence, ...]  # for every repaired citation

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(c.document_id for c in self.checks if c.document_id not in self.citations)

    @property
    def added(self) -> tuple[str, ...]:
        cited = {c.document_id for c in self.checks}
        return tuple(d for d in self.citations if d not in cited)


class CitationVerifier:
    """Sentence-level evidence over a fixed set of documents (a haystack, or a packed context).

    Example:
        >>> verifier = CitationVerifier(documents)  # doctest: +SKIP
        >>> verifier.verify("Water rates rise 7.5 percent.", ["doc3"]).citations  # doctest: +SKIP
    """

    def __init__(self, documents: Sequence[Document], *, embedder: Embedder | None = None,
                 mix: float = DEFAULT_MIX, relative_threshold: float = DEFAULT_RELATIVE_THRESHOLD,
                 min_support: float = DEFAULT_MIN_SUPPORT, offsets: Sequence[int] | None = None,
                 confirm: LLM | None = None, borderline: float = 0.1) -> None:
        """``documents`` may hold several pieces of one document (same id, e.g. the passages of a packed
        context); ``offsets`` gives each piece's character offset in its document, so evidence spans are
        document offsets. With ``confirm``, an LLM decides the borderline documents: those whose support is
        within ``borderline`` x the best support of the bar."""
        if not 0.0 <= mix <= 1.0 or not 0.0 < relative_threshold <= 1.0:
            raise ConfigError("mix must be in [0, 1] and relative_threshold in (0, 1]")
        self.mix = mix
        self.relative_threshold = relative_threshold
        self.min_support = min_support
        self.confirm = confirm
        self.borderline = borderline
        self.embedder = embedder or get_embedder("wordllama")
        self.document_ids = [d.id for d in documents]
        self._known = set(self.document_ids)
        texts, owners, spans = [], [], []
        for number, document in enumerate(documents):
            shift = offsets[number] if offsets is not None else 0
            for span in sentence_spans(document.text):
                texts.append(document.text[span.start : span.end])
                owners.append(number)
                spans.append((span.start + shift, span.end + shift))
        self._texts = texts
        # each sentence's document, numbered (several pieces, e.g. the passages of a context, share a document)
        self._document_names = list(dict.fromkeys(self.document_ids))
        number_of = {document_id: number for number, document_id in enumerate(self._document_names)}
        self._sentence_document = np.array([number_of[self.document_ids[o]] for o in owners], dtype=np.int64)
        self._spans = spans
        self._vectors = self.embedder.encode_documents(texts)
        self._tokens = [set(t) for t in tokenize(texts)] if texts else []
        self._frequency = document_frequency(self._tokens)

    def support_parts(self, statement: str) -> tuple[np.ndarray, np.ndarray]:
        """(cosine, IDF-weighted keyword overlap) of every sentence with ``statement``: the two parts that
        ``mix`` weighs. Computed once, they can be weighed and thresholded many ways (a threshold sweep)."""
        if not self._texts:
            return np.zeros(0), np.zeros(0)
        cosine = self._vectors @ self.embedder.encode_query(statement)
        overlap = keyword_overlap(set(tokenize([statement])[0]), self._tokens, self._frequency)
        return cosine, overlap

    def evidence(self, text: str) -> list[Evidence]:
        """Each document's best supporting sentence for ``text`` (citation markers ignored), best first."""
        return self._evidence(strip_citations(text))

    def _evidence(self, statement: str, parts: tuple[np.ndarray, np.ndarray] | None = None) -> list[Evidence]:
        """:meth:`evidence` of a text whose citation markers are already stripped."""
        cosine, overlap = parts if parts is not None else self.support_parts(statement)
        support = self.mix * cosine + (1 - self.mix) * overlap
        order = np.argsort(-support, kind="stable")
        _, first = np.unique(self._sentence_document[order], return_index=True)  # each document's best sentence
        out = []
        for sentence in order[np.sort(first)].tolist():  # best first
            start, end = self._spans[sentence]
            out.append(Evidence(self._document_names[self._sentence_document[sentence]], float(support[sentence]),
                                start, end, self._texts[sentence]))
        return out

    def verify(self, text: str, cited: Sequence[str], *,
               parts: tuple[np.ndarray, np.ndarray] | None = None) -> VerifiedBullet:
        """Check the citations of one bullet and compute the repaired citation list (``parts``: the bullet's
        :meth:`support_parts`, when already computed)."""
        statement = strip_citations(text)
        evidence = self._evidence(statement, parts)
        by_document = {e.document_id: e for e in evidence}
        top = evidence[0].support if evidence else 0.0
        bar = self.relative_threshold * top if top >= self.min_support and top > 0 else math.inf
        supported = [e for e in evidence if e.support >= bar]
        if self.confirm is not None and bar < math.inf:
            undecided = [e for e in evidence if abs(e.support - bar) <= self.borderline * top]
            verdicts = self._ask(statement, undecided)
            supported = [e for e in evidence if verdicts.get(e.document_id, e.support >= bar)]
        keep = {e.document_id for e in supported}
        checks = tuple(CitationCheck(d, d in keep, by_document.get(d)) for d in dict.fromkeys(cited))
        return VerifiedBullet(statement, checks, tuple(e.document_id for e in supported), tuple(supported))

    def _ask(self, statement: str, candidates: Sequence[Evidence]) -> dict[str, bool]:
        """The LLM's yes/no on each borderline piece of evidence; an unreadable reply keeps the offline call."""
        from citesum.llm.base import ChatRequest

        if not candidates or self.confirm is None:
            return {}
        requests = [ChatRequest.from_prompt(CONFIRM_PROMPT.format(statement=statement, evidence=e.text), max_tokens=8)
                    for e in candidates]
        verdicts = {}
        for evidence, completion in zip(candidates, self.confirm.map(requests)):
            answer = completion.text.strip().lower()
            if answer.startswith(("yes", "no")):
                verdicts[evidence.document_id] = answer.startswith("yes")
        return verdicts

    @property
    def sentence_count(self) -> int:
        return len(self._texts)

    def is_known(self, document_id: str) -> bool:
        return document_id in self._known


def context_verifier(context: Context, **options: object) -> CitationVerifier:
    """A verifier over the document text of the context: each block's passages at their offsets in their
    document (what was packed; for a Summary RAG block, the document its summary stands for)."""
    pieces, offsets = [], []
    for block in context.blocks:
        if block.passages:
            for passage in block.passages:
                pieces.append(Document(block.document_id, block.title, passage.text))
                offsets.append(passage.char_start)
        else:  # full-context blocks hold the (possibly truncated) document itself
            pieces.append(Document(block.document_id, block.title, block.text))
            offsets.append(0)
    return CitationVerifier(pieces, offsets=offsets, **options)  # type: ignore[arg-type]


def check_summary(summary: Summary, repair: bool, **options: object) -> tuple[Summary, list[VerifiedBullet]]:
    """Verify every bullet's citations against the summary's own context; with ``repair``, replace them by
    the supported documents (which are, by construction, documents of the context)."""
    verifier = context_verifier(summary.context, **options)
    checked = [check_bullet(verifier, summary.context, bullet, repair) for bullet in summary.bullets]
    bullets = tuple(bullet for bullet, _ in checked)
    return (replace(summary, bullets=bullets) if repair else summary), [verified for _, verified in checked]


def check_bullet(verifier: CitationVerifier, context: Context, bullet: Bullet,
                 repair: bool) -> tuple[Bullet, VerifiedBullet]:
    """One bullet's citations verified against ``context`` (by ``verifier``, :func:`context_verifier` of it);
    with ``repair``, the bullet citing the supported documents instead, in context order as a reader expects."""
    verified = verifier.verify(bullet.text, bullet.citations)
    if not repair:
        return bullet, verified
    number_of = {document_id: number for number, document_id in context.numbers.items()}
    cited = sorted(verified.citations, key=number_of.__getitem__)
    return replace(bullet, citations=tuple(cited), numbers=tuple(number_of[d] for d in cited)), verified