"""Conversational text (meeting transcripts) made into statements a bullet can quote.

A transcript such as ODSum's meetings runs speaker turns together on one line ("grad c: Yeah , we had a long
discussion ... phd d: It it doesn't"). Split into sentences as prose, a "sentence" then spans several turns and
their labels, and bullets came out as "Yeah , industrial designer: marketing: whatever project manager: ...".
Here a text is recognised as a transcript by its recurring speaker labels, cut into turns at the labels, and each
turn's sentences are cleaned of disfluencies (fillers, stutters, spaces before punctuation); backchannels and
questions are no statements and are left out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from citesum.chunking import sentence_spans

#: where a speaker label may end: a colon and a space after a lower-case word
_COLON = re.compile(r"[a-z]: ")
#: a label is one to three lower-case words before that colon ("marketing", "industrial designer", "phd d")
_LABEL_WORDS = 3
#: a text is a transcript when labels that recur start at least this many turns (a packed passage of a
#: transcript, ~100 tokens, holds a few) ...
MIN_TURNS = 3
#: ... and one turn starts every this many characters on average, at least (prose with a colon now and then
#: has far fewer)
MAX_CHARACTERS_PER_TURN = 400

_FILLERS = re.compile(r"\b(?:um+|uh+|hmm+|mm+|mm-hmm|uh-huh|er+m?|ah+|you know|i mean|sort of|kind of)\b[ ,]*",
                      re.IGNORECASE)
_STUTTER = re.compile(r"\b(\w+(?: \w+){0,2})(?: \1\b)+", re.IGNORECASE)  # "did did" "I think I think"
_BROKEN = re.compile(r"\b\w+ - (?=\w)")  # a word broken off: "re - remote" -> "remote"
_SPACE_BEFORE = re.compile(r"\s+([,.!?;:'])")
_LEADING_BACKCHANNEL = re.compile(r"^(?:(?:yeah|yes|okay|ok|so|well|right|oh|alright|and|but)\b[ ,]*)+",
                                  re.IGNORECASE)
_LONE_LETTER = re.compile(r"(?<!['’])\b(?![aAI]\b)[a-zA-Z]\b(?!['’])\s*")  # a word begun and dropped: "to h be", "p when"
#: how a spoken question begins when the transcript gives it no question mark
_ASKS = {"what", "how", "why", "where", "who", "which", "do", "does", "did", "shall", "should", "could", "would",
         "can", "are", "is"}
_BACKCHANNEL = {"yeah", "yes", "yep", "no", "okay", "ok", "right", "so", "well", "sure", "alright", "oh", "and",
                "but", "i", "think", "mean", "know", "it", "that", "is", "true", "exactly", "cool", "great", "good",
                "fine", "huh", "wow", "really", "anyway"}


@dataclass(frozen=True)
class Statement:
    """One cleaned sentence of a transcript, with who said it."""

    speaker: str | None  # None: the turn began before the text (a passage cut from a transcript)
    text: str


def _label_candidates(text: str) -> list[tuple[list[tuple[str, int]], int]]:
    """For every colon that may end a speaker label: its candidate labels (its last one, two and three words,
    with where each starts: "... and marketing:" -> "marketing", "and marketing", "buttons and marketing"), and
    where the words said after it start."""
    candidates = []
    for colon in _COLON.finditer(text):
        before = text[: colon.start() + 1]
        words = re.findall(r"[a-z]+", before[-60:])
        options = []
        for n in range(1, min(_LABEL_WORDS, len(words)) + 1):
            label = " ".join(words[-n:])
            start = len(before) - len(label)
            if before.endswith(label) and (start == 0 or before[start - 1].isspace()):
                options.append((label, start))
        candidates.append((options, colon.end()))
    return candidates


def speaker_labels(texts: Sequence[str]) -> set[str] | None:
    """The speaker labels of a set of texts (the blocks of one context) when they are transcripts: labels that
    recur, starting at least ``MIN_TURNS`` turns and one every ``MAX_CHARACTERS_PER_TURN`` characters; None for
    prose (a few "Note: " colons). Found over all the texts together, since one packed passage of a transcript
    may hold a speaker's label once."""
    colons = [[label for label, _ in options] for text in texts for options, _ in _label_candidates(text)]
    counts = Counter(label for options in colons for label in options)
    labels = {label for label, count in counts.items() if count >= 2}
    # a colon starts one turn, however many of its candidates recur ("mayor said" and "said" are one turn); the
    # speaker is its longest recurring candidate, and a conversation has two speakers at least
    speakers = [[label for label in options if label in labels][-1] for options in colons
                if any(label in labels for label in options)]
    characters = sum(len(text) for text in texts)
    if (len(speakers) < MIN_TURNS or len(set(speakers)) < 2
            or characters / max(len(speakers), 1) > MAX_CHARACTERS_PER_TURN):
        return None
    return labels


def speaker_turns(text: str, labels: set[str]) -> list[tuple[str | None, str]]:
    """(speaker, what they said) for each turn of ``text``, cut at ``labels`` (the longest that ends at a
    colon); words before the first label end a turn whose speaker is not in the text (speaker None)."""
    turns = [(None, 0, 0)]  # (label, where the label starts, where the turn's words start)
    for options, said_from in _label_candidates(text):
        known = [(label, start) for label, start in options if label in labels]
        if known:
            label, start = known[-1]
            turns.append((label, start, said_from))
    out = []
    for (label, _, said_from), following in zip(turns, turns[1:] + [None]):
        said = text[said_from : following[1] if following else len(text)].strip()
        if said:
            out.append((label, said))
    return out


def has_speaker_label(text: str, labels: set[str]) -> bool:
    """Whether ``text`` holds a turn of one of the ``labels`` (a context may mix transcripts and prose)."""
    return any(label in labels for options, _ in _label_candidates(text) for label, _ in options)


def clean_utterance(text: str) -> str:
    """A spoken sentence without fillers, stutters, broken-off words and the spaces transcripts put before
    punctuation and apostrophes ("it 's" -> "it's")."""
    text = _SPACE_BEFORE.sub(r"\1", text)  # first, so that "it 's" is one word when lone letters go
    text = _FILLERS.sub("", text)
    text = _BROKEN.sub("", text)
    text = _LONE_LETTER.sub("", text)
    text = _STUTTER.sub(r"\1", text)
    text = re.sub(r"\s+", " ", text).strip(" ,")
    text = _LEADING_BACKCHANNEL.sub("", text)
    return text[:1].upper() + text[1:]


def is_statement(text: str, min_words: int) -> bool:
    """Whether a cleaned spoken sentence states something: a whole sentence (a turn cut off by the next speaker
    ends without a full stop), not a question (a question mark, or the first word of one: transcripts often leave
    the mark out), not a backchannel ("Yeah, okay, right."), at least ``min_words`` words."""
    words = re.findall(r"[\w']+", text.lower())
    return (bool(words) and len(words) >= min_words and text.rstrip().endswith((".", "!"))
            and words[0] not in _ASKS and not all(word in _BACKCHANNEL for word in words))


def transcript_statements(text: str, min_words: int, labels: set[str]) -> list[Statement]:
    """The statements of a transcript's text, in order, its turns cut at ``labels`` (:func:`speaker_labels`)."""
    out = []
    for speaker, said in speaker_turns(text, labels):
        for span in sentence_spans(said):
            sentence = clean_utterance(said[span.start : span.end])
            if is_statement(sentence, min_words):
                out.append(Statement(speaker, sentence))
    return out
