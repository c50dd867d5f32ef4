from __future__ import annotations

import pytest

from citesum.chunking import chunk_passages, document_unit, make_units, sentence_spans
from citesum.errors import ConfigError
from citesum.tokens import get_tokenizer
from citesum.types import Document
from fixtures import CLOCKD_README, MOUSE_FAQ

TOKENIZER = get_tokenizer()


def test_cl100k_counts_known_values() -> None:
    assert TOKENIZER.count("hello world") == 2
    assert TOKENIZER.count("") == 0
    # special-token text inside a document is counted, not rejected
    assert TOKENIZER.count("<|endoftext|>") > 1
    assert TOKENIZER.truncate("one two three four", 2) == "one two"


def test_unknown_tokenizer_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match="cl100k"):
        get_tokenizer("nope")


def test_hf_tokenizer_loads_a_file_and_reports_a_missing_or_broken_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = Tokenizer(models.WordLevel({"water": 0, "rates": 1, "[UNK]": 2}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.save(str(tmp_path / "tokenizer.json"))
    tokenizer = get_tokenizer(f"hf:{tmp_path / 'tokenizer.json'}")
    assert tokenizer.count("water rates rise") == 3 and tokenizer.truncate("water rates rise", 2) == "water rates"
    with pytest.raises(ConfigError, match="cannot load the tokenizer file '/nope/tokenizer.json'"):
        get_tokenizer("hf:/nope/tokenizer.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ConfigError, match="broken.json"):
        get_tokenizer(f"hf:{tmp_path / 'broken.json'}")


def test_sentence_spans_respect_abbreviations_and_newlines() -> None:
    text = "Dr. Smith met Mr. Jones in the U.S. capital. They talked!\nA new line starts here"
    sentences = [text[s.start : s.end] for s in sentence_spans(text)]
    assert sentences == ["Dr. Smith met Mr. Jones in the U.S. capital.", "They talked!", "A new line starts here"]


def _doc(text: str) -> Document:
    return Document(id="d", title="t", text=text)


def test_passages_are_capped_exact_slices_in_order() -> None:
    text = " ".join(f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(60))
    passages = chunk_passages(_doc(text), TOKENIZER, max_tokens=40)
    assert len(passages) > 5
    assert all(p.token_count <= 40 for p in passages)
    assert all(p.text == text[p.char_start : p.char_end] for p in passages)
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    # sentences are never broken when they fit: every passage ends at a sentence end
    assert all(p.text.endswith(".") for p in passages)
    assert all(p.char_start < q.char_start for p, q in zip(passages, passages[1:]))


def test_a_sentence_that_introduces_a_listing_goes_into_the_passage_of_its_listing() -> None:
    # chrony's README.Debian, as a new user asked it: the passage ended with "It is filled by two important
    # files:", and the next began with the listing, whose first line lost its indentation once the two passages
    # were joined in a context, so it was no longer code and the sentence showed nothing, or half of it
    passages = chunk_passages(_doc(CLOCKD_README), TOKENIZER, max_tokens=60)
    [shown] = [p for p in passages if "clockd.conf" in p.text]
    assert shown.text.startswith("It is filled by two important files:"), [p.text for p in passages]
    assert "clockd.keys" in shown.text  # (the blank line inside the listing does not end it)
    assert all(p.text == CLOCKD_README[p.char_start : p.char_end] and p.token_count <= 60 for p in passages)
    spans = sentence_spans(CLOCKD_README)
    assert [CLOCKD_README[s.start:s.end] for s in spans if s.holds_on] == ["It is filled by two important files:"]


def test_an_faq_entry_goes_into_the_passage_of_its_answer() -> None:
    # gpm's FAQ, as a new user asked it: a passage began inside a "Q:" entry ("It works fine except that when I
    # try to drag the mouse ...") without its label, and the asker's words were stated as the answer
    passages = chunk_passages(_doc(MOUSE_FAQ), TOKENIZER, max_tokens=60)
    [answer] = [p for p in passages if "You are probably running" in p.text]
    assert answer.text.startswith("Q: I have a serial mouse."), [p.text for p in passages]
    assert not any(p.text.startswith(("It works fine", "the middle button pressed")) for p in passages)
    # an entry ends at its paragraph's end with CRLF line ends too, and at an answer's label on the next line: the
    # answer's own sentences hold on to nothing (a fresh-eyes review: with CRLF, every unit after the first "Q:"
    # held on, and so did an answer's on the line after its question)
    windows = MOUSE_FAQ.replace("\n", "\r\n")
    crlf = [windows[s.start:s.end].replace("\r", "") for s in sentence_spans(windows) if s.holds_on]
    assert crlf == [MOUSE_FAQ[s.start:s.end] for s in sentence_spans(MOUSE_FAQ) if s.holds_on]
    assert "Try the bare protocol, which ignores the repeated events." not in crlf
    adjacent = "Q: How do I reset it?\nA: Hold the button. Then wait ten seconds.\n"
    assert [adjacent[s.start:s.end] for s in sentence_spans(adjacent) if s.holds_on] == ["Q: How do I reset it?"]
    # an entry too long to go with its answer's first sentence ends its passage, as before
    [entry] = [p for p in chunk_passages(_doc(MOUSE_FAQ), TOKENIZER, max_tokens=50) if "I have a serial" in p.text]
    assert entry.text.startswith("Q: I have") and entry.text.endswith("works just fine.")


def test_long_sentence_splits_at_clauses_then_words_then_tokens() -> None:
    clauses = ", ".join(f"clause {i} has several words in it" for i in range(30)) + "."
    passages = chunk_passages(_doc(clauses), TOKENIZER, max_tokens=20)
    assert all(p.token_count <= 20 for p in passages)
    assert all(p.text.endswith((",", ".")) for p in passages)  # clause boundaries

    words = " ".join(f"word{i}" for i in range(100))
    passages = chunk_passages(_doc(words), TOKENIZER, max_tokens=10)
    assert all(p.token_count <= 10 for p in passages)
    assert " ".join(p.text for p in passages) == words

    blob = "x" * 3000
    passages = chunk_passages(_doc(blob), TOKENIZER, max_tokens=25)
    assert all(p.token_count <= 25 for p in passages)
    assert "".join(p.text for p in passages) == blob


def test_a_piece_of_a_cut_sentence_says_it_goes_on_with_one_the_passage_before_began() -> None:
    # a new user's trial: squid's README.Debian has a sentence of 389 characters, wrapped, that a 100-token passage
    # cannot hold; the passage with its rest opened with "this way you won't loose the logs ...", stated as a
    # sentence. Each later piece of a cut unit now says so; whole units (and a cut unit's first piece) do not.
    long = ("When purging the proxy, the package did not remove the cache files, typically at /var/spool/proxy,\n"
            "and now it also does not remove the logs at /var/log/proxy, this means that if you want to\n"
            "migrate to the other flavour and, afterwards, purge this one, you must make sure you have\n"
            "at least version 4.13-6 installed, this way you will not lose the logs when you purge it.")
    text = f"Both flavours share the config files.\n{long}\nSo check the version first."
    passages = chunk_passages(_doc(text), TOKENIZER, max_tokens=30)
    cut = [p for p in passages if p.char_start >= text.index("When") and p.char_end <= text.index("So check")]
    assert len(cut) >= 3 and cut[0].text.startswith("When purging")
    assert not cut[0].continues and all(p.continues for p in cut[1:])
    assert [p.continues for p in passages if p not in cut] == [False, False]
    # by words, and by tokens, too
    words = chunk_passages(_doc(" ".join(f"word{i}" for i in range(60)) + ". Next one."), TOKENIZER, max_tokens=10)
    assert [p.continues for p in words][:2] == [False, True] and not words[-1].continues
    assert [p.continues for p in chunk_passages(_doc("x" * 600), TOKENIZER, max_tokens=25)][:3] == [False, True, True]


def test_document_unit_truncates_at_sentence_boundary() -> None:
    text = " ".join(f"This is sentence {i} of the document." for i in range(200))
    [unit] = document_unit(_doc(text), TOKENIZER, max_tokens=100)
    assert unit.token_count <= 100
    assert unit.text.endswith("document.")
    assert text.startswith(unit.text)
    # adding the next sentence would break the cap
    next_end = text.index(".", len(unit.text) + 1) + 1
    assert TOKENIZER.count(text[:next_end]) > 100


def test_document_unit_keeps_short_documents_whole_and_cuts_one_huge_sentence() -> None:
    assert document_unit(_doc("Short. Text."), TOKENIZER, 1024)[0].text == "Short. Text."
    [unit] = document_unit(_doc("a" * 20000), TOKENIZER, max_tokens=50)
    assert 0 < unit.token_count <= 50


def test_empty_and_bad_settings() -> None:
    assert chunk_passages(_doc("   \n "), TOKENIZER) == []
    assert document_unit(_doc(""), TOKENIZER) == []
    with pytest.raises(ConfigError):
        chunk_passages(_doc("x"), TOKENIZER, max_tokens=0)
    with pytest.raises(ConfigError, match="passage, document"):
        make_units(_doc("x"), TOKENIZER, "sentence", 10)  # type: ignore[arg-type]
