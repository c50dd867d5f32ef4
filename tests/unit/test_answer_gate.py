"""Say only what answers, and say when nothing does (issue 44): the extractive summarizer's answer gate, the
question's form, abstention with leads, whole sentences quoted as written, and the LLM summarizer's rules."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from citesum.llm.fake import FakeLLM
from citesum.summarize.extractive import (ExtractiveOptions, ExtractiveSummarizer, missing_subjects, question_form,
                                          sentence_terms)
from citesum.summarize.llm import LLMSummarizer
from citesum.errors import ConfigError
from citesum.index.lexical import tokenize
from citesum.types import Context, ContextBlock, Document, Passage, TermFrequencies

MANUAL = """Thread Safety
=============

libffi is not completely thread-safe. However, many parts are, and if you follow
some simple rules, you can use it safely in a multi-threaded program.

Next: Memory Usage, Previous: Closures, Up: Using libffi   [Contents][Index]
"""
ZLIB = """All the code is thread safe. zlib's gz* functions use stdio
library routines, and most of zlib's functions use the library memory
allocation routines by default.
"""
FAQ = """The compress and deflate functions produce data in the zlib format, which
is different and incompatible with the gzip format. The gz* functions in zlib
on the other hand use the gzip format.

A spokesperson declined to comment. The library is written in C and has been
ported to many platforms, from mainframes to phones.
"""


def _context(*texts: str, terms: TermFrequencies | None = None) -> Context:
    """A context of one block per text, each block one passage (as the packer builds it)."""
    blocks = []
    for number, text in enumerate(texts, start=1):
        passage = Passage(f"d{number}::0", f"d{number}", 0, 0, len(text), text, len(text.split()))
        blocks.append(ContextBlock(number, f"d{number}", f"D{number}", text, len(text.split()), (passage,), 1.0))
    return Context(tuple(blocks), "original", 10_000, 100, terms)


def _terms(held: dict[str, int], units: int = 100) -> TermFrequencies:
    return TermFrequencies(3, units, {term: (min(count, 3), count) for term, count in held.items()})


def test_question_forms() -> None:
    for specific in ["Is libffi thread-safe?", "When does dpkg activate a file trigger?", "Why is X deprecated?",
                     "In what order are dpkg triggers run?", "How can a program activate a trigger?"]:
        assert question_form(specific) == "specific", specific
    for broad in ["What is happening with the city's water supply?", "How is public transit in the city changing?",
                  "Which features is libffi missing?", "What does the zlib FAQ say about the gzip format?",
                  "How does XZ implement threads and what are its drawbacks?"]:
        assert question_form(broad) == "broad", broad
    for topic in ["Is Elon Musk's impact mentioned?", "Impact of fuel types on performance?",
                  "Discussing long-term finance prospects?", "zlib and gzip formats"]:
        assert question_form(topic) == "topic", topic


def test_a_specific_question_gets_one_or_two_whole_sentences_quoted_as_written() -> None:
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=5)).summarize(
        "Is libffi thread-safe?", _context(MANUAL, ZLIB, FAQ))
    texts = [b.text for b in summary.bullets]
    # its own lower-case name, not "Libffi"; the navigation bar and the heading never; two at most
    assert texts[0] == "libffi is not completely thread-safe."
    assert 1 <= len(texts) <= 2 and not summary.abstained
    assert not any("Next:" in t or t.startswith("Thread Safety") for t in texts)
    assert summary.bullets[0].citations == ("d1",)


def test_a_broad_question_gets_several_facts_and_never_stock_filler() -> None:
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=5)).summarize(
        "What does the FAQ say about the zlib and gzip formats?", _context(FAQ, ZLIB, MANUAL))
    texts = [b.text for b in summary.bullets]
    assert len(texts) >= 2, texts
    assert "The gz* functions in zlib on the other hand use the gzip format." in texts
    assert not any("declined to comment" in t for t in texts)
    # a hard-wrapped sentence is one bullet, its line breaks collapsed
    assert ("The compress and deflate functions produce data in the zlib format, which is different and "
            "incompatible with the gzip format.") in texts


def test_a_question_naming_what_no_document_mentions_is_answered_with_leads() -> None:
    question = "Can libffi be compiled to WebAssembly with Emscripten?"
    terms = _terms({"libffi": 3, "compil": 10, "thread": 5, "safe": 5})
    assert missing_subjects(question, terms) == ["WebAssembly", "Emscripten"]
    # a common word the documents do not use is a paraphrase, not a missing subject
    assert missing_subjects("What is happening with the water supply?", _terms({"water": 20})) == []
    summary = ExtractiveSummarizer().summarize(question, _context(MANUAL, ZLIB, FAQ, terms=terms))
    assert summary.bullets == () and summary.abstained
    assert summary.notes[0].startswith("No passage in the 3 documents that best match the question answers it")
    # one document is one (a new user's trial: "No passage in the 1 documents that best match ...")
    alone = ExtractiveSummarizer().summarize("Can libffi be compiled to WebAssembly with Emscripten?",
                                             _context(MANUAL, terms=terms))
    assert alone.notes[0].startswith("No passage in the one document that best matches the question answers it")
    assert "'WebAssembly'" in summary.notes[0]
    assert 1 <= len(summary.leads) <= 3 and len({lead.text for lead in summary.leads}) == len(summary.leads)
    assert all(lead.citations for lead in summary.leads)


def test_a_question_no_sentence_covers_is_abstained_on() -> None:
    # every word of the question is in the collection, but no sentence holds its rarest ones together
    terms = _terms({"zlib": 40, "gzip": 30, "format": 30, "licens": 2, "patent": 1, "fee": 1})
    summary = ExtractiveSummarizer().summarize("Are there patent license fees for the gzip format?",
                                               _context(FAQ, ZLIB, terms=terms))
    assert summary.abstained and summary.bullets == ()


def test_the_bullet_count_is_a_maximum_not_a_quota() -> None:
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=5)).summarize(
        "Is zlib thread-safe?", _context(ZLIB, MANUAL))
    assert 1 <= len(summary.bullets) <= 2 and summary.notes == ()


def test_options_are_checked() -> None:
    for name in ("min_answer", "abstain_below", "specific_ratio", "broad_ratio", "coverage_weight"):
        with pytest.raises(Exception, match=name):
            ExtractiveOptions(**{name: 1.5})


def test_the_llm_says_no_answer_and_its_off_topic_bullets_are_left_out() -> None:
    context = _context(MANUAL, ZLIB)
    none = LLMSummarizer(FakeLLM(["NO ANSWER"])).summarize("Does libffi run on WebAssembly?", context)
    assert none.abstained and none.bullets == () and none.notes[0].startswith("No passage in the 2 documents")
    mixed = LLMSummarizer(FakeLLM(["- libffi is not completely thread-safe [1].\n"
                                   "- Mainframes and phones are supported platforms [2]."]))
    summary = mixed.summarize("Is libffi thread-safe?", context)
    assert [b.text for b in summary.bullets] == ["libffi is not completely thread-safe."]
    assert "1 bullet(s) of the model left out" in summary.notes[0]
    assert "at most 5 bullet points" in summary.prompt and "NO ANSWER" in summary.prompt


def test_questions_that_ask_for_nothing_here_are_abstained_on() -> None:
    terms = _terms({"libffi": 3, "thread": 5, "safe": 5, "zlib": 40, "gzip": 30, "format": 30})
    for question in ("???", "Describe how to bake bread at home"):
        summary = ExtractiveSummarizer().summarize(question, _context(MANUAL, ZLIB, FAQ, terms=terms))
        assert summary.abstained and summary.bullets == (), question


def test_a_fact_stated_only_at_length_is_quoted_rather_than_lost() -> None:
    long = ("libffi is thread-safe only in part, because " + "the closure allocator " * 12
            + "must be guarded by the caller when several threads share it.")
    summary = ExtractiveSummarizer(ExtractiveOptions(max_bullet_words=20)).summarize(
        "Is libffi thread-safe?", _context(long + "\n", ZLIB))
    assert [b.text for b in summary.bullets] == [" ".join(long.split())] and not summary.abstained


def test_the_models_no_answer_in_any_dress() -> None:
    from citesum.summarize.llm import says_no_answer

    for output in ("NO ANSWER", "NO ANSWER.\n\nNo document mentions WebAssembly.", "**NO ANSWER**", "- NO ANSWER"):
        assert says_no_answer(output), output
    assert not says_no_answer("- No answer was given by the council [1].")
    assert not says_no_answer("- libffi is not completely thread-safe [1].")


def test_an_faqs_question_heads_its_answer() -> None:
    # the answer holds none of the question's words; the FAQ's question above it does
    faq = ("Q: Can zlib compress data larger than four gigabytes?\n\n"
           "A: Yes. Its stream functions process any amount of input correctly, a buffer at a time.\n\n"
           "Q: Does zlib run in the kernel?\n\nA: Some kernels ship a copy of it for their own use.\n")
    summary = ExtractiveSummarizer().summarize("Can zlib compress data larger than four gigabytes?",
                                               _context(faq, MANUAL))
    assert [b.text for b in summary.bullets][:1] == [
        "Its stream functions process any amount of input correctly, a buffer at a time."]


CLOSURE_API = """The Closure API
===============

You may see old code referring to ffi_prep_closure.  This
function is deprecated, as it cannot handle the need for separate
writable and executable addresses.

ffi_prep_closure_loc prepares a closure for use; it takes the closure, the
call interface, the function to call and its user data.
"""
MAN_DB_FAQ = """Why use man-db instead of man?
==============================

The man and man-db
packages forked from a common code base in the mid-1990s.  The original goal
of man-db was, as indicated by the name, to add database caching to manual
page searches.  The increase in computer performance has considerably
outpaced the growth of manual page collections, so some people now ask what
the point is of using man-db rather than man.
"""
SHELL_README = """Shellmath
=========

Bash does not understand floating point arithmetic.  Use bc instead, or the
functions of this library, which add, subtract, multiply and divide decimal
numbers in pure Bash.
"""


def test_a_why_question_is_answered_by_the_sentence_that_gives_the_reason() -> None:
    from citesum.summarize.extractive import expected_answer, holds_answer

    assert expected_answer("Why is ffi_prep_closure deprecated?") == "reason"
    assert expected_answer("How often does man-db rebuild its database?") == "frequency"
    assert expected_answer("On what date did Vicksburg surrender?") == "quantity"
    assert expected_answer("How many columns can a table have?") == "quantity"
    assert expected_answer("Is libffi thread-safe?") is None
    assert holds_answer("This function is deprecated, as it cannot handle the need.", "reason")
    assert not holds_answer("You may see old code referring to ffi_prep_closure.", "reason")
    terms = _terms({"ffi_prep_closur": 2, "deprec": 1, "closur": 6, "old": 4, "code": 20})
    summary = ExtractiveSummarizer().summarize("Why is ffi_prep_closure deprecated?",
                                               _context(CLOSURE_API, MANUAL, terms=terms))
    # before: "You may see old code referring to ffi_prep_closure.", which names it and gives no reason; the
    # sentence that gives it opens its bullet, as "This function" refers back to it
    assert [b.text for b in summary.bullets][:1] == [
        "You may see old code referring to ffi_prep_closure. This function is deprecated, as it cannot handle the "
        "need for separate writable and executable addresses."]


def test_a_how_often_question_no_sentence_answers_is_abstained_on() -> None:
    terms = _terms({"man": 30, "db": 12, "rebuild": 0, "manual": 20, "page": 25, "index": 4, "databas": 3})
    summary = ExtractiveSummarizer().summarize("How often does man-db rebuild its manual page index database?",
                                               _context(MAN_DB_FAQ, MANUAL, terms=terms))
    # before: "The original goal of man-db was, as indicated by the name, to add database caching to manual page
    # searches.", about its database, and saying nothing of how often
    assert summary.abstained and summary.bullets == () and summary.leads


def test_a_question_most_of_whose_words_no_document_uses_is_abstained_on() -> None:
    from citesum.summarize.extractive import absent_words

    terms = _terms({"point": 4, "float": 2, "arithmet": 2, "bash": 30, "thread": 5, "safe": 5})
    assert absent_words("What is the boiling point of mercury?", terms) == ["boiling", "mercury"]
    summary = ExtractiveSummarizer().summarize("What is the boiling point of mercury?",
                                               _context(SHELL_README, MANUAL, terms=terms))
    # before: "Bash does not understand floating point arithmetic.", for holding "point", the one word of the
    # question the documents use (a word no document uses weighed nothing)
    assert summary.abstained and summary.bullets == ()
    assert "no document mentions 'boiling', 'mercury'" in summary.notes[0]
    # a paraphrase stays answerable: one word of three the documents lack does not sink the rest
    answered = ExtractiveSummarizer().summarize("Does Bash understand floating point maths?",
                                                _context(SHELL_README, MANUAL, terms=terms))
    assert [b.text for b in answered.bullets][:1] == ["Bash does not understand floating point arithmetic."]


DBUS_NEWS = """D-Bus 1.5.8

• New API: dbus_setenv(), a simple wrapper around setenv().
  Note that this is not thread-safe. (fd.o #39196, Simon)

• Add GetConnectionCredentials() method (fd.o #54445, Simon)
"""


def test_a_specific_answer_cites_only_documents_that_say_it_of_what_was_asked() -> None:
    terms = _terms({"libffi": 3, "thread": 8, "safe": 8, "note": 20})
    summary = ExtractiveSummarizer().summarize("Is libffi thread-safe?", _context(MANUAL, DBUS_NEWS, terms=terms))
    assert summary.bullets[0].text == "libffi is not completely thread-safe."
    # before: it cited the D-Bus news too, whose "this is not thread-safe" is said of dbus_setenv()
    assert summary.bullets[0].citations == ("d1",)


def _titled(*documents: tuple[str, str], terms: TermFrequencies | None = None) -> Context:
    """A context of one block per (title, text)."""
    context = _context(*(text for _, text in documents), terms=terms)
    blocks = tuple(dataclasses.replace(block, title=title) for block, (title, _) in zip(context.blocks, documents))
    return dataclasses.replace(context, blocks=blocks)


CURL_FAQ = """curl and libcurl are released under a MIT/X derivative license. The license is very liberal.
curl can follow redirects when it is told to with the --location option.
"""
ATTRS_DOCS = """attrs is the Python package that will bring back the joy of writing classes by relieving you
from the drudgery of implementing object protocols. While Data Classes are implementing features from attrs
every now and then, their presence is dependent on the Python version, not the package version.
Nevertheless, there are still reasons to prefer attrs over Data Classes in the standard library.
"""


def test_a_specific_answer_speaks_of_what_the_question_names() -> None:
    from citesum.summarize.extractive import named_subjects

    context = _titled(("curl FAQ", CURL_FAQ), ("attrs documentation", ATTRS_DOCS))
    assert named_subjects("What license is attrs released under?", context) == {"attr"}
    summary = ExtractiveSummarizer().summarize("What license is attrs released under?", context)
    # before: "curl and libcurl are released under a MIT/X derivative license.", the licence of another program
    assert summary.abstained and summary.bullets == (), [b.text for b in summary.bullets]
    answered = ExtractiveSummarizer().summarize("What license is curl released under?", context)
    assert [b.text for b in answered.bullets][:1] == ["curl and libcurl are released under a MIT/X derivative license."]


def test_the_asker_is_no_word_of_the_question() -> None:
    from citesum.summarize.extractive import answer_scores
    from citesum.index.lexical import tokenize

    sentence = frozenset(tokenize(["Key bindings in Tkinter work only when the widget has the focus."])[0])
    # before: "my" weighed as much as "key" and held no sentence, so no sentence covered the whole question
    question = "Why don't my key bindings work in Tkinter?"
    terms = _terms({word: 5 for word in tokenize([question])[0]} | {"my": 40})  # the FAQ says "my" often
    assert answer_scores(question, [sentence], terms)[0] == pytest.approx(1.0)


def test_a_word_the_documents_write_apart_is_not_absent() -> None:
    from citesum.summarize.extractive import absent_words

    terms = _terms({"attr": 30, "python": 20, "data": 10, "class": 25, "librari": 5, "standard": 5, "now": 9,
                    "has": 40, "would": 8, "still": 6, "use": 50})
    question = "Now that Python has dataclasses in the standard library, why would I still use attrs?"
    assert absent_words(question, terms) == ["dataclasses"]
    assert absent_words(question, terms, [ATTRS_DOCS]) == []
    summary = ExtractiveSummarizer().summarize(question, _titled(("attrs documentation", ATTRS_DOCS), terms=terms))
    # before: abstained, "no document mentions 'dataclasses'"
    assert not summary.abstained and summary.bullets
    # written apart counts as written; a short name is never found by chance in two short words; nor is a word
    # whose pieces the text holds only far apart
    assert absent_words("Does libffi run on WebAssembly?", _terms({"libffi": 3, "run": 9}), ["web assembly"]) == []
    assert absent_words("Is zstd supported?", _terms({"support": 3}), ["zs td"]) == ["zstd"]
    assert absent_words("Does libffi run on WebAssembly?", _terms({"libffi": 3, "run": 9}),
                        ["the web page and the assembly code"]) == ["WebAssembly"]


def test_a_word_the_documents_write_with_a_hyphen_is_held() -> None:
    from citesum.index.lexical import tokenize
    from citesum.summarize.extractive import absent_words, answer_scores, hyphen_joined_terms, sentence_terms

    # Performance Co-Pilot's tutorial on processor performance says "re-computed", the asker "recompute": the
    # tokenizer reads the one as "re" and "comput", the other as "recomput"
    gold = "The three load averages use different exponential constants and are all re-computed every 5 seconds."
    other = "The load average is reported by pcp-uptime, pcp-atop and the PCP metric kernel.all.load."
    question = "How often does the Linux kernel recompute the load average that pcp-uptime shows?"
    words = tokenize([gold, other, question])
    terms = _terms({word: 4 for word in {*words[0], *words[1]}} | {"linux": 6, "kernel": 9, "show": 20})
    # before: "no document mentions 'recompute'", and the question was turned away
    assert absent_words(question, terms) == ["recompute"]
    assert absent_words(question, terms, [gold, other]) == []
    assert "recomput" in hyphen_joined_terms(gold) and "filesystem" in hyphen_joined_terms("on file-systems")
    assert "stateoftheart" in hyphen_joined_terms("a state-of-the-art codec")  # a chain of hyphens is one word
    assert hyphen_joined_terms("see RFC-1035 and x-y") == frozenset()  # a number, or pieces too short, join nothing
    # the word counts for the sentence that writes it with a hyphen, as rare as the sentences given make it: held
    # by one of ten, it weighs much; held by all, it weighs next to nothing
    fillers = [f"Step {n} of the kernel's load average is shown by pcp-uptime." for n in range(8)]
    given = [gold, other, *fillers]
    with_joined = answer_scores(question, sentence_terms(given), terms)
    without = answer_scores(question, [frozenset(tokens) for tokens in tokenize(given)], terms)
    assert with_joined[0] > without[0] + 0.05, (with_joined, without)
    spread = answer_scores(question, sentence_terms([gold, other, *[f"{f} It is re-computed." for f in fillers]]),
                           terms)
    assert abs(spread[0] - without[0]) < 0.01, (spread, without)
    # the other way round: the question's "recomputed" is the documents' "re-compute"
    assert absent_words("Is the average recomputed?", _terms({"averag": 5}), ["they re-compute it"]) == []
    # other forms of the word written so count; a word no text writes stays absent
    assert absent_words("Does it reformat the table?", _terms({"tabl": 5}), ["it is re-formatted on save"]) == []
    assert absent_words("Does it reformat the table?", _terms({"tabl": 5}), ["it is formatted on save"]) == ["reformat"]


def test_a_library_named_with_or_without_its_lib_is_not_absent() -> None:
    from citesum.summarize.extractive import absent_words

    opus = ("Since Opus is a stateful codec, the encoding process starts with creating an encoder state. "
            "To encode a frame, opus_encode() or opus_encode_float() must be called with exactly one frame "
            "(2.5, 5, 10, 20, 40 or 60 ms) of audio data.")
    terms = _terms({"opus": 40, "encod": 30, "audio": 12, "step": 3, "api": 5, "setup": 2, "cleanup": 1,
                    "state": 9, "frame": 20, "from": 50})
    question = "What are the steps to encode audio with the libopus encoder API, from setup to cleanup?"
    # before: "libopus" was a subject no document mentions, and the question was turned away
    assert absent_words(question, terms) == []
    summary = ExtractiveSummarizer().summarize(question, _titled(("Opus: Opus Encoder", opus), terms=terms))
    assert not summary.abstained or "libopus" not in summary.notes[0]
    assert absent_words("Is opus thread-safe?", _terms({"libopus": 5, "thread": 3, "safe": 3})) == []
    # a library whose name the documents hold neither way is still absent
    assert absent_words("Is libopus thread-safe?", _terms({"thread": 3, "safe": 3})) == ["libopus"]


def test_a_word_spelled_the_other_way_is_the_word_the_documents_write() -> None:
    from citesum.summarize.extractive import absent_words, spelled_as_held

    manual = ("Highlighting stdin until EOF\n\nThe -s option processes lines one at a time until EOF, rather than "
              "waiting to process the entire file. This only works for stdin, and is intended for streaming input "
              "such as you get from tail -f. pygmentize colors its output with the terminal formatter.\n")
    terms = _terms({"pygment": 30, "color": 6, "log": 4, "file": 40, "live": 1, "written": 5, "pipe": 3,
                    "tail": 2, "output": 20, "stream": 3, "line": 30, "time": 10, "while": 5, "be": 40,
                    "from": 30})
    question = "Can pygmentize colour a log file live while it is being written, e.g. piped from tail -f?"
    # before: "no document mentions 'colour'", and the question was turned away (a new user's trial)
    assert spelled_as_held(question, terms).startswith("Can pygmentize color a log file")
    assert absent_words(question, terms) == []
    summary = ExtractiveSummarizer().summarize(question, _titled(("Command Line Interface", manual), terms=terms))
    assert "colour" not in " ".join(summary.notes)
    # a word the collection holds as written is left alone, and one it holds neither way stays absent
    assert spelled_as_held("What colour is it?", _terms({"colour": 2, "color": 9})) == "What colour is it?"
    assert absent_words("Which flavour is it?", _terms({"which": 3})) == ["flavour"]
    assert spelled_as_held("Can I organise my catalogue?", _terms({"organ": 3, "catalog": 4})) == \
        "Can I organise my catalog?"
    # a fresh-eyes review: "four" is not "for" (a word of no stem of its own is never taken), "tour" no "tor", a
    # common word is no library's name ("tool" is not "libtool"), and a name keeps its case ("LibPNG", "PNG")
    held = _terms({"for": 9, "tor": 3, "libtool": 4, "png": 5, "option": 4, "featur": 3, "tool": 0})
    assert spelled_as_held("Which four options matter?", held) == "Which four options matter?"
    assert spelled_as_held("Is there a tour of the features?", held) == "Is there a tour of the features?"
    assert spelled_as_held("Which tool builds it?", _terms({"libtool": 4, "build": 3})) == "Which tool builds it?"
    assert spelled_as_held("Which formats does LibPNG support?", held) == "Which formats does PNG support?"


DAR_NOTES = """Differential backups and filters

A differential backup saves only the files that changed since the archive of reference, which may be a full
backup or another differential one. You can use different filters for a differential backup than for the full
backup it refers to: a file the filters exclude is recorded as unchanged, not as removed, so it is not deleted
when the backups are restored one after the other.
"""


def test_a_slip_of_the_keys_in_a_name_is_read_as_the_word_the_documents_write() -> None:
    from citesum.summarize.extractive import absent_words, mended_slip, spelled_as_held

    terms = _terms({"differenti": 4, "backup": 9, "filter": 3, "exclud": 2, "full": 3, "file": 12, "restor": 2,
                    "archiv": 5, "remov": 1, "delet": 1})
    question = "Is it ok to use other exclude filters for my differntial backups than for the full one?"
    # before: "no document mentions 'differntial'" (the fifteenth split's question, as its writer typed it)
    assert spelled_as_held(question, terms) == question.replace("differntial", "differential")
    assert "differntial" in absent_words(question, terms)
    assert not [word for word in absent_words(spelled_as_held(question, terms), terms) if "differ" in word]
    summary = ExtractiveSummarizer().summarize(question, _titled(("dar: differential backups", DAR_NOTES),
                                                                 terms=terms))
    assert "no document mentions" not in " ".join(summary.notes)
    assert summary.bullets and "different filters" in summary.bullets[0].text
    # the answer says which word was read as which
    assert "read 'differntial' as 'differential', a word the documents write" in summary.notes
    # each kind of slip: a letter left out, one too many, a neighbouring key, two letters swapped
    holds = lambda words: [word == "differential" for word in words]  # noqa: E731
    for slip in ("differntial", "differrential", "diffetential", "diffrential", "diffreential"):
        assert mended_slip(slip, holds) == "differential", slip
    # a word of six letters mended to one of seven; never one of six to another of six
    assert mended_slip("settng", lambda words: [word == "setting" for word in words]) == "setting"
    assert mended_slip("pacmen", lambda words: [word == "pacman" for word in words]) is None
    # a trial of the page: "authentation", a slip of one stem with "authentication", came first, and is no word
    from citesum.summarize.extractive import _asked_stems

    assert mended_slip("authentcation", lambda words: [_asked_stems(w) == ["authent"] for w in words]) == \
        "authentication"
    # a new user's trial: the analyser reads "confirmation" as "confirm" and the slip as "confirmaton"
    assert mended_slip("confirmaton", lambda words: [word == "confirmation" for word in words]) == "confirmation"
    # only to a common word: a name is often one slip from another name (a review: "mktemp" was read as
    # "mkstemp", and a question about the one answered about the other), and "patchly", which the analyser reads
    # as "patch", is no word
    for typed, other in (("mktemp", "mkstemp"), ("setuid", "seteuid"), ("gnupot", "gnuplot"), ("patchy", "patchly")):
        assert mended_slip(typed, lambda words, other=other: [word == other for word in words]) is None, typed
    # nor a word past forty letters (a pasted token), which would cost thousands of candidates
    assert mended_slip("a" + "b" * 60 + "c", lambda words: [True for _ in words]) is None
    # a key far from the right one, a first or last letter changed, a common word, a name written with
    # capitals or digits, and a word two held words are a slip from, are all left as written
    assert mended_slip("diffemential", holds) is None
    assert mended_slip("xifferential", holds) is None and mended_slip("differentiaj", holds) is None
    assert spelled_as_held("Does openssl work here?", _terms({"openssh": 3, "work": 3})) == "Does openssl work here?"
    assert spelled_as_held("Why does ipconfig fail?", _terms({"ifconfig": 3})) == "Why does ipconfig fail?"
    assert spelled_as_held("Can I use its replies?", _terms({"reli": 3, "use": 4})) == "Can I use its replies?"
    assert spelled_as_held("The job keeps trippping.", _terms({"trip": 3, "job": 2})) == "The job keeps trippping."
    assert spelled_as_held("Does it run on WebAssemby?", _terms({"webassembl": 3})) == "Does it run on WebAssemby?"
    assert mended_slip("renaders", lambda words: [word == "readers" for word in words]) == "readers"
    assert mended_slip("renaders", lambda words: [word in ("readers", "renders") for word in words]) is None
    assert spelled_as_held("Which renaders are there?", _terms({"reader": 3, "render": 2})) == \
        "Which renaders are there?"


def test_a_slip_in_a_name_is_searched_for_as_the_index_writes_it(tmp_path: Path) -> None:
    from citesum import Index
    from citesum.summarize import spelled_as_indexed
    from citesum.types import Document

    index = Index.create(tmp_path / "ix")
    index.add([Document("dar.txt", "Differential backups", DAR_NOTES),
               *[Document(f"note{n}.md", f"Note {n}", f"Note {n} says how the build of part {n} is laid out and tested.")
                 for n in range(20)]])
    # before: searched for as typed, a word no unit holds
    assert spelled_as_indexed("Which filters apply to a differntial backup?", index) == \
        "Which filters apply to a differential backup?"
    assert spelled_as_indexed("Which filters apply to a differntial backup?", index) != \
        spelled_as_indexed("Which filters apply to a diffemential backup?", index)


def test_both_summarizers_read_a_slip_as_the_search_did_and_say_so(tmp_path: Path) -> None:
    from citesum import Index
    from citesum.summarize import build_context

    index = Index.create(tmp_path / "ix")
    index.add([Document("dar.txt", "Differential backups", DAR_NOTES),
               *[Document(f"note{n}.md", f"Note {n}", f"Note {n} says how the build of part {n} is laid out and tested.")
                 for n in range(20)]])
    question = "Which filters apply to a differntial backup?"
    context = build_context(question, index)
    assert context.respellings == {"differntial": "differential"}  # read once, by the search, for both
    note = "read 'differntial' as 'differential', a word the documents write"
    assert note in ExtractiveSummarizer().summarize(question, context).notes
    llm = FakeLLM(["- Filters given for a differential backup apply to it alone [1].\n"])
    summary = LLMSummarizer(llm).summarize(question, context)
    # before: the model was asked of "differntial", the answer check looked for it in the bullets (it found
    # "backup" here), and the asker was not told what was read
    assert note in summary.notes
    assert "differential backup?" in llm.prompts[0] and "differntial" not in llm.prompts[0]
    streamed = list(LLMSummarizer(FakeLLM(["- Filters given for a differential backup apply to it alone [1].\n"]))
                    .stream(question, context))
    assert note in streamed[-1].notes
    # a context no search over one index gathered (several collections' at once) is read by its statistics, by
    # both summarizers (the review found the LLM's asked in the asker's slip there)
    gathered = dataclasses.replace(context, respellings=None)
    llm = FakeLLM(["- Filters given for a differential backup apply to it alone [1].\n"])
    assert note in LLMSummarizer(llm).summarize(question, gathered).notes[-1:]
    assert "differntial" not in llm.prompts[0]
    assert note in ExtractiveSummarizer().summarize(question, gathered).notes


MBEDTLS_NET = """net_sockets.h File Reference

Network sockets abstraction layer to integrate Mbed TLS into a BSD-style sockets API. The module is intended
only to be used with the Mbed TLS library and is not intended to be used by third party application software
directly.

int mbedtls_net_recv(void *ctx, unsigned char *buf, size_t len) Read at most 'len' characters.
int mbedtls_net_send(void *ctx, const unsigned char *buf, size_t len) Write at most 'len' characters.
"""


def test_a_family_of_names_written_with_a_star_is_mentioned_by_its_members() -> None:
    from citesum.summarize.extractive import absent_words

    terms = _terms({"mbedtls_net_recv": 2, "mbedtls_net_send": 2, "applic": 3, "socket": 5, "function": 3,
                    "network": 3, "connect": 1, "plain": 1, "use": 4, "own": 2})
    question = "Should my own application use the mbedtls_net_* socket functions for its plain network connections?"
    # before: "no document mentions 'mbedtls_net'" (the twenty-sixth split, held out in the seventeenth round)
    assert absent_words(question, terms, [MBEDTLS_NET]) == []
    summary = ExtractiveSummarizer().summarize(question, _titled(("Mbed TLS: net_sockets.h", MBEDTLS_NET),
                                                                 terms=terms))
    assert "mbedtls_net" not in " ".join(summary.notes)
    # the name without its star is one name, which no document writes; nor does any write a member of
    # "mbedtls_tcp_*"
    assert absent_words("Should I use mbedtls_net for sockets?", terms, [MBEDTLS_NET]) == ["mbedtls_net"]
    assert absent_words("Should I use the mbedtls_tcp_* functions?", terms, [MBEDTLS_NET]) == ["mbedtls_tcp"]
    # a word between stars is emphasis, not a family of names (a review: "*Wayland*" over "waylandsink")
    assert absent_words("Does it support *Wayland*?", _terms({"support": 2}), ["The waylandsink element."]) == \
        ["Wayland"]


JSON_C_README = """Building with partial threading support

Although json-c does not support fully multi-threaded access to object trees, it has some code to help make its
use in threaded programs a bit safer. Currently, this is limited to using atomic operations for json_object_get()
and json_object_put().

Since this may have a performance impact, of at least 3x slower, it is disabled by default.

Building on Unix with git, gcc and cmake

If you already have json-c installed, see Linking to libjson-c for how to build and link your program against it.
JSON-C implements a reference counting object model that allows you to easily construct JSON objects in C.
"""


def test_a_sentence_answering_in_other_words_is_stated_when_a_contextual_model_reads_it_so() -> None:
    # a new user's trial (json-c's Doxygen page among nine documents): the answer shares "json-c" and "objects"
    # with the question and scored under the floor; the question was turned away with the answer as its first
    # lead. Here the floor is raised over every sentence of this one small context to put it there
    question = "Can I safely share json-c objects between several threads?"
    context = _titled(("json-c: json-c", JSON_C_README))
    answer = ("Although json-c does not support fully multi-threaded access to object trees, it has some code to "
              "help make its use in threaded programs a bit safer.")
    without = ExtractiveSummarizer(ExtractiveOptions(min_answer=0.99, second_opinion=None)).summarize(question,
                                                                                                      context)
    assert without.abstained and without.leads[0].text == answer
    seconded = ExtractiveSummarizer(ExtractiveOptions(min_answer=0.99))
    summary = seconded.summarize(question, context)
    assert summary.bullets and summary.bullets[0].text == answer
    # a question nothing answers is still turned away: the model does not read its closest sentence as close
    nothing = seconded.summarize("Does json-c read JSON5 files with comments in them?", context)
    assert nothing.abstained and nothing.bullets == ()


def test_a_word_spelled_otherwise_is_searched_for_as_the_index_writes_it(tmp_path: Path) -> None:
    from citesum import Index
    from citesum.summarize import build_context, spelled_as_indexed
    from citesum.types import Document

    index = Index.create(tmp_path / "ix")
    index.add([Document("palette.md", "Palette", "pygmentize prints its output in color with the terminal formatter."),
               *[Document(f"note{n}.md", f"Note {n}", f"Note {n} says how the build of part {n} is laid out and tested.")
                 for n in range(30)]])
    # a fresh-eyes review: the question was searched for as written, and a search by words found nothing
    assert spelled_as_indexed("Does pygmentize print in colour?", index) == "Does pygmentize print in color?"
    context = build_context("Does pygmentize print in colour?", index, retriever="bm25")
    assert context.blocks and context.blocks[0].document_id == "palette.md"
    from citesum import Pipeline, PipelineOptions

    found = Pipeline(index, PipelineOptions(retriever="bm25")).search("pygmentize colour", k=3)
    assert found["hits"] and found["hits"][0]["document_id"] == "palette.md", found
    assert found["query"] == "pygmentize colour"  # as asked


def test_a_question_asked_after_what_it_states_is_a_question_not_a_topic() -> None:
    from citesum.summarize.extractive import asked_clause, expected_answer

    # before: each was a topic (no question word at its start), answered with five ungated bullets
    for question, form in [("I deleted a lot of rows but my SQLite file did not shrink: why?", "specific"),
                           ("As an administrator, where should software that I build myself go?", "specific"),
                           ("A site sets its login cookie from JavaScript; will curl see that cookie?", "specific"),
                           ('curl fails with "certificate verify failed"; what causes that and how do I fix it?',
                            "broad")]:
        assert question_form(question) == form, question
    assert asked_clause("In a UTF-8 locale, s/.*// in sed does not empty the line; why?") == "why?"
    assert expected_answer("In a UTF-8 locale, s/.*// in sed does not empty the line; why?") == "reason"
    # what states and never asks stays a topic, whatever its commas
    for topic in ["Impact of fuel types, tyres and weather on performance?", "SVB's collapse: causes and effects",
                  "Is Elon Musk's impact mentioned?"]:
        assert question_form(topic) == "topic", topic
    deleted = ("If you delete a lot of data and want to shrink the database file, run the VACUUM command. "
               "SQLite is not directly comparable to client/server SQL database engines such as MySQL or Oracle. "
               "As of version 3.6.19, SQLite supports foreign key constraints.")
    summary = ExtractiveSummarizer().summarize("I deleted a lot of rows but my SQLite file did not shrink: why?",
                                               _titled(("SQLite FAQ", deleted)))
    assert [b.text for b in summary.bullets] == [
        "If you delete a lot of data and want to shrink the database file, run the VACUUM command."]


SQLITE_FAQ = """(12) I deleted a lot of data but the database file did not get any smaller. Is this a bug?
No. When you delete information from an SQLite database, the unused disk space is added to an internal
"free-list" and is reused the next time you insert data.
(20) I accidentally deleted some important information from my SQLite database. How can I recover it?
If you have a backup copy of your database file, recover the information from your backup.
SQLite stores its pages in one file. It deletes nothing at once. It reuses the space. Who would want it otherwise?
"""


def test_an_faqs_question_with_its_premise_heads_the_answer_and_is_never_stated() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(SQLITE_FAQ).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: "I accidentally deleted some important information from my SQLite database." was a fact to state
    assert not any(sentence.startswith("I ") for sentence in stated)
    assert ("I accidentally deleted some important information from my SQLite database. How can I recover it?"
            in stated["If you have a backup copy of your database file, recover the information from your backup."])
    # a paragraph that ends on a question after several statements keeps its statements
    assert "SQLite stores its pages in one file." in stated
    summary = ExtractiveSummarizer().summarize("What can I do if I deleted data from my SQLite database by mistake?",
                                               _context(SQLITE_FAQ))
    assert summary.bullets and not any(b.text.startswith("I ") for b in summary.bullets)


def test_the_named_subject_rule_is_a_knob_and_spares_topics() -> None:
    context = _titled(("curl FAQ", CURL_FAQ), ("attrs documentation", ATTRS_DOCS))
    off = ExtractiveSummarizer(ExtractiveOptions(off_subject_factor=1.0)).summarize(
        "What license is attrs released under?", context)
    assert [b.text for b in off.bullets][:1] == ["curl and libcurl are released under a MIT/X derivative license."]
    # a topic or a broad question is not asked of one thing: its sentences keep their scores
    for question in ("Licenses of attrs and curl discussed?", "What licenses are attrs and curl released under?"):
        summary = ExtractiveSummarizer().summarize(question, context)
        assert "curl and libcurl are released under a MIT/X derivative license." in [b.text for b in summary.bullets]
    with pytest.raises(ConfigError):
        ExtractiveOptions(off_subject_factor=2.0)


def test_frame_words_leave_the_words_the_stemmer_shares_with_documents() -> None:
    from citesum.summarize.extractive import _question_frame

    frame = _question_frame()
    assert {"my", "your", "don", "am"} <= frame  # "What am I missing?"
    assert not {"us", "mine", "won"} & frame  # "the US", "mining", "who won"


def test_a_rhetorical_question_ending_a_paragraph_keeps_its_statements() -> None:
    from citesum.summarize.extractive import _statable_sentences

    text = ("Git stores each commit as a snapshot of the whole tree, not as a diff. Why does that matter?\n"
            "Q: Is the store safe? The store is safe from power loss.\n")
    [block] = _context(text).blocks
    stated = [sentence for sentence, _ in _statable_sentences(block, 3)]
    assert "Git stores each commit as a snapshot of the whole tree, not as a diff." in stated


NANO_FAQ = """4.5. How do I select text for or paste text from the clipboard when nano's mouse support is turned on?
Try holding down the Shift key and selecting or pasting the text as you normally would.
4.6. When I paste text into a document, each line gets indented further than the last. Why? And how can I stop this?
You have the autoindent feature turned on. Hit Meta-I to turn it off, paste your text, and then hit Meta-I again to
turn it back on.
"""


def test_a_numbered_faq_line_with_two_questions_heads_its_answer() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(NANO_FAQ).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: "4.6." was a sentence of its own, and the premise after it a fact to state
    assert not any("each line gets indented" in sentence for sentence in stated)
    assert ("4.6. When I paste text into a document, each line gets indented further than the last. Why? And how "
            "can I stop this?") in stated["You have the autoindent feature turned on."]
    summary = ExtractiveSummarizer().summarize(
        "Whenever I paste code into nano, every line gets indented a bit more than the last; how do I stop that?",
        _titled(("The nano FAQ", NANO_FAQ)))
    texts = [b.text for b in summary.bullets]
    assert texts and set(texts) <= {"You have the autoindent feature turned on.", "Hit Meta-I to turn it off, paste "
                                    "your text, and then hit Meta-I again to turn it back on."}, texts


def test_a_common_word_written_as_a_name_no_document_uses_is_a_missing_subject() -> None:
    # Exuberant Ctags' FAQ never names Rust: the language is what the question asks about, though "rust" is a
    # common word, which the collection's lack of would otherwise make a paraphrase
    terms = _terms({"exuber": 5, "ctag": 40, "generat": 10, "tag": 60, "sourc": 20, "file": 50, "say": 3,
                    "one": 9, "languag": 4, "two": 4, "parser": 2, "exist": 3, "font": 2, "chang": 8})
    assert missing_subjects("Can Exuberant Ctags generate tags for Rust source files?", terms) == ["Rust"]
    # written so once is enough, though another sentence opens with it
    assert missing_subjects("Can Exuberant Ctags generate tags for Rust source files? Rust ones?", terms) == ["Rust"]
    # a quotation closed before it leaves it a name
    assert missing_subjects('Does the "ctags" Rust parser exist?', terms) == ["Rust"]
    # in lower case, where a sentence, a clause after a colon or a list's item starts, the capital tells nothing
    assert missing_subjects("Can Exuberant Ctags generate tags for rust source files?", terms) == []
    assert missing_subjects("Rust source files: can Exuberant Ctags generate tags for them?", terms) == []
    assert missing_subjects("Can Exuberant Ctags generate tags for my source files? Rust ones, say?", terms) == []
    assert missing_subjects("Which two languages can Exuberant Ctags generate tags for: Rust source files?",
                            terms) == []
    assert missing_subjects("Can Exuberant Ctags generate tags for these?\n- Rust\n- Go", terms) == []
    # a quoted message, a contraction in it closing no quotation, or a message between backticks
    assert missing_subjects('Why does ctags say "skipped Rust file" for my source files?', terms) == []
    assert missing_subjects("Why does ctags say 'can't parse Rust file' for my source files?", terms) == []
    assert missing_subjects("Why does ctags say `Rust file skipped` for my source files?", terms) == []
    # a title-cased question capitalises every word
    assert missing_subjects("Can Exuberant Ctags Generate Tags For Rust Source Files?", terms) == []
    # what the asker runs things on: the documents answer for whatever it is; a path's part is no name
    assert missing_subjects("How do I change the font on my Mac?", terms) == []
    assert missing_subjects("Can Exuberant Ctags read my Rust source files?", terms) == ["Rust"]
    assert missing_subjects("Why can't Exuberant Ctags read source files in ~/Projects/Rust?", terms) == []
    # a name the asker tells as their case, before the sentence that asks, is not what they ask about
    assert missing_subjects("I write Rust at work. Can Exuberant Ctags generate tags for my source files?",
                            terms) == []


def test_a_name_in_capitals_no_document_uses_is_a_missing_subject() -> None:
    terms = _terms({"convert": 5, "packag": 40, "debian": 30})
    assert missing_subjects("How do I convert an RPM package into a Debian package?", terms) == ["RPM"]
    # a common word in capitals at a sentence's start is no name
    assert missing_subjects("Convert a package to Debian's format?", terms) == []
    # a short option is no name: the document that answers may say what it does ("optimization flags")
    terms = _terms({"keep": 20, "cflag": 5, "configur": 10, "enabl": 30, "code": 40, "coverag": 6})
    assert missing_subjects("Can I keep -O2 in CFLAGS when I configure with --enable-code-coverage?", terms,
                            ["Note that all optimization flags in CFLAGS must be disabled when code coverage is "
                             "enabled with --enable-code-coverage."]) == []
    assert missing_subjects("Can I keep O2 in CFLAGS?", terms) == ["O2"]
    # the plural of a common word is common ("logins": the vocabulary splits it, not "login"); a name's is not
    terms = _terms({"home": 5, "server": 30, "handful": 2, "ssh": 20, "run": 40, "fork": 6, "select": 6})
    assert missing_subjects("For a home server with a handful of SSH logins, should I run fork or select?",
                            terms) == []
    assert missing_subjects("Can a home server run fork on GPUs?", terms) == ["GPUs"]
    assert missing_subjects("Can a home server run fork with shardings?", terms) == ["shardings"]
    assert missing_subjects("Can a home server run fork on databases in registries?", terms) == []


#: an FAQ in Markdown, as libsamplerate's reads once rendered: its numbers written "Q6 :", a space before the colon
SAMPLERATE_FAQ = """Q5 : I'm using libsamplerate but the high quality settings sound worse than the linear converter. Why?

Firstly, if you are using the src_simple() function on successive blocks of a stream, you will get bad results.

Q6 : I'm using the sinc converters and up-sampling by a ratio of 2. I reset the converter and put in 1000 samples \
and I expect to get 2000 samples out, but I'm getting less than that. Why?

The short answer is that there is a transport delay inside the converter itself.
"""


def test_an_faqs_question_numbered_with_a_space_before_its_colon_heads_its_answer() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(SAMPLERATE_FAQ).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: the asker's statements were facts to state, and "Why?" alone headed the answer
    assert not any(sentence.startswith(("Q6", "I ")) for sentence in stated)
    assert stated["The short answer is that there is a transport delay inside the converter itself."] == (
        "D1\nQ6 : I'm using the sinc converters and up-sampling by a ratio of 2. I reset the converter and put in 1000 "
        "samples and I expect to get 2000 samples out, but I'm getting less than that. Why?\n")


PAM_GUIDE = """pam_access - logdaemon style login access control

All module types (account, auth, password and session) are provided.

The pam_access PAM module is mainly for access management.

pam_debug - debug the PAM stack

All module types (auth, account, password and session) are provided.

The pam_debug PAM module is intended as a debugging aide for determining how the PAM stack is operating.

pam_env - set/unset environment variables

The auth and session module types are provided.

This module allows the (un)setting of environment variables.
"""


def test_a_sentence_a_manual_repeats_is_one_bullet() -> None:
    # the Linux-PAM guide says which module types each module provides, in the same words for most
    for question in ("What are the four kinds of PAM modules (account, auth, password, session), and what does each "
                     "one do?", "What does the Linux-PAM guide say about module types?"):
        summary = ExtractiveSummarizer().summarize(question, _titled(("The Linux-PAM guide", PAM_GUIDE)))
        texts = [b.text for b in summary.bullets]
        assert len([t for t in texts if t.startswith("All module types")]) == 1, texts


MAKING_PATCHES = """Tips for Patch Producers

To save people from partially applying a patch before other patches that should have gone before it, you can
make the first patch in the patch file update a file that must be changed by every patch.
Take care to not send out reversed patches, since these make people wonder whether they have already applied
the patch.
"""


def test_a_word_in_a_documents_path_is_no_missing_subject() -> None:
    # diffutils' manual speaks of "diff" and never names the package; its pages sit in a folder "diffutils"
    terms = _terms({"patch": 6, "appli": 4, "peopl": 3, "make": 20, "manual": 2, "advis": 1, "other": 9})
    question = "What does the diffutils manual advise when I make patches for other people to apply?"
    context = _titled(("Making Patches (Comparing and Merging Files)", MAKING_PATCHES), terms=terms)
    assert "(no document mentions 'diffutils')" in ExtractiveSummarizer().summarize(question, context).notes[0]
    block = dataclasses.replace(context.blocks[0], document_id="diffutils/Making-Patches.html")
    summary = ExtractiveSummarizer().summarize(question, dataclasses.replace(context, blocks=(block,)))
    assert not any("diffutils" in note for note in summary.notes)


def test_a_question_after_a_sentence_that_states_is_read_by_the_question() -> None:
    from citesum.summarize.extractive import asked_clause

    # questions as people write them in a bug tracker: what happened, then what they ask
    question = "My program is launched by a wrapper shell script, and Memcheck reports nothing. How do I fix this?"
    assert asked_clause(question) == "How do I fix this?"
    assert question_form(question) == "specific"
    assert question_form("Memcheck sorts leaked memory into several categories. Which ones should I fix?") == "broad"
    # a topic stays a topic
    assert question_form("Memcheck's leak categories. Impact on large programs?") == "topic"


def test_negative_questions_quoted_stops_and_the_askers_trouble_are_questions_not_topics() -> None:
    from citesum.summarize.extractive import asked_clause

    # before: each was a topic, answered with five ungated bullets ("getmail6 is Copyright © 1998-2023 ...")
    for question in ["I write past the end of a stack array and Memcheck doesn't say a thing. Shouldn't it catch that?",
                     "My script hangs on a requests.get() call. Doesn't requests give up after a while?",
                     'getmail prints: Warning: ignoring unknown parameter "read_all". But read_all is a real option, '
                     "isn't it?",
                     # the asker's trouble, told without a question mark
                     "My script calls http from cron and it just hangs forever, but the same command works fine in "
                     "my terminal."]:
        assert question_form(question) == "specific", question
    # a sentence that ends inside its quotation ends a clause: the question after it is what is asked
    question = 'Local users can log in, but every upload fails with "500 Unknown command." What am I missing?'
    assert asked_clause(question) == "What am I missing?" and question_form(question) == "specific"
    # what names a subject stays a topic, in the first person too
    for topic in ["Impact of fuel types on performance?", "My thoughts on the SVB collapse?", "Cannot open display"]:
        assert question_form(topic) == "topic", topic


def test_a_trouble_told_in_the_third_person_is_a_question_not_a_topic() -> None:
    # before: each was a topic, answered with five ungated bullets; the asker shows in a pronoun anywhere in it
    # ("for me", "our"), or in what does not happen ("can't find its CD")
    for trouble in ["fdm aborts straight away since I put my mail password in ~/.netrc",
                    "every track abcde rips for me ends in .ogg.ogg instead of just .ogg",
                    "The kids' old DOS game in DOSBox keeps saying it can't find its CD, even though the drive is "
                    "mounted as D:",
                    "Our knotd crashed overnight and the admin can't find a core file anywhere on the server",
                    # (the twentieth round: "my" after the case's opening; it had been a topic, with five bullets)
                    "pip install codespell succeeded but my shell says codespell: command not found."]:
        assert question_form(trouble) == "specific", trouble
    # a subject named stays a topic: "US" is no pronoun, nor "I" after "World War", "Me" in a name or "our" inside
    # a phrase; a short one names ("My dotfiles"); a "not" tells no trouble
    for topic in ["US politics and the media landscape in the last decade", "My dotfiles",
                  "Tesla's Berlin factory, where production started in 2022",
                  "Climate policy in the EU and its effect on our farmers",
                  "World War I and its lasting effects on European borders today",
                  "Topic models, i.e. LDA and its variants, in practice today",
                  "Countries that do not recognise Kosovo and the reasons given",
                  "The Me Too movement and its effect on hiring in Hollywood",
                  "The impact of My Little Pony on toy sales in Europe",
                  # (a file's name is no asker's thing: a fresh-eyes review)
                  "Tuning my.cnf settings for InnoDB performance on large servers"]:
        assert question_form(topic) == "topic", topic


def test_something_going_wrong_told_without_the_asker_is_a_question_and_a_request_to_walk_through_is_broad() -> None:
    # before: each was a topic, answered with up to five ungated bullets ("openvpn keeps complaining ..." got the
    # man page and the init script); the trouble shows in a verb of going wrong after its subject
    for trouble in ["openvpn keeps complaining about being out of memory",
                    "OpenVPN stopped logging after syslog was reloaded, and it runs in a chroot",
                    "installing cryptography fails with fatal error: 'openssl/opensslv.h' file not found",
                    'apt-cacher-ng refuses to start and says "Address already in use"',
                    "Building lynx from source, the compiler chokes on GridText.c. Any idea what to try?"]:
        assert question_form(trouble) == "specific", trouble
    assert question_form("Walk me through adding a new service to runit, with its own log service") == "broad"
    assert question_form("Any suggestions for speeding up a slow build of the documentation here?") == "broad"
    # the same words as a noun or an adjective, in a clause of the subject, or telling an event of the news, name
    # a subject
    for topic in ["The failed merger of two banks and what it means for savers today",
                  "Impact of crashes on insurance premiums in the last decade",
                  "Airlines and their breaks for pilots on long-haul flights across Asia",
                  "Startups that failed in 2023 and what their founders learned from it",
                  "Stocks that fell after the regional bank failed in March 2023",
                  "Plane crashes in the last decade and their causes worldwide",
                  "The best kept secrets of the Python standard library for data work",
                  "Prices kept rising across Europe throughout the energy crisis of 2022",
                  "Usain Bolt broke the world record in Berlin in 2009",
                  "Healthcare reform bill failed in the Senate after a year of negotiations",
                  "Companies whose shares crashed after earnings reports this year in tech",
                  "Windows line breaks in git diff output across different platforms"]:
        assert question_form(topic) == "topic", topic


FLEX_FAQ = """Flex is not matching my patterns in the same order that I defined them.

flex picks the rule that matches the most text (i.e., the longest possible input string). This is because flex
uses an entirely different matching technique ("deterministic finite automata") that actually does all of the
matching simultaneously, in parallel. A side-effect of this parallel matching is that when the input matches more
than one rule, flex scanners pick the rule that matched the most text.
If you want flex to choose a shorter match, then you can work around this behavior by expanding your short rule to
match more text, then put back the extra.
"""


def test_a_long_question_is_answered_by_a_sentence_holding_its_rarest_words() -> None:
    from citesum.index.lexical import tokenize
    from citesum.summarize.extractive import answer_scores

    # it tells what happened before it asks: more words than the sentences that answer it hold
    question = ("flex is not matching my rules in the order I wrote them; how does it choose between rules, and how "
                "can I make it pick the one I want?")
    terms = _terms({"flex": 30, "match": 25, "rule": 12, "order": 6, "wrote": 2, "choos": 3, "between": 15,
                    "make": 40, "pick": 2, "one": 60, "want": 10, "text": 30, "input": 20}, units=300)
    sentence = frozenset(tokenize(["If you want flex to choose a shorter match, then you can work around this "
                                   "behavior by expanding your short rule to match more text, then put back the "
                                   "extra."])[0])
    every_word = answer_scores(question, [sentence], terms)[0]
    assert every_word < answer_scores(question, [sentence], terms, most_words=7)[0] <= 1.0
    context = _titled(("Lexical Analysis With Flex", FLEX_FAQ), terms=terms)
    assert ExtractiveSummarizer(ExtractiveOptions(answer_words=None)).summarize(question, context).abstained
    texts = [b.text for b in ExtractiveSummarizer().summarize(question, context).bullets]
    assert texts and all(t.startswith(("A side-effect", "If you want flex")) for t in texts), texts
    with pytest.raises(ConfigError):
        ExtractiveOptions(answer_words=0)


CCACHE_SHARING = """Sharing a local cache

A group of developers can increase the cache hit rate by sharing a local cache directory. To share a local cache
without unpleasant side effects, the following conditions should to be met:

Use the same cache directory.

Make sure that the configuration option hard_link is false (which is the default).

Make sure that all users are in the same group.

Set the configuration option umask to 002. This ensures that cached files are accessible to everyone in the group.

Make sure that all users have write permission in the entire cache directory (and that you trust all users of the
shared cache).

Make sure that the setgid bit is set on all directories in the cache.
"""


def test_a_question_told_after_its_case_counts_the_words_of_the_clause_that_asks_first() -> None:
    from citesum.summarize.extractive import answer_scores

    # ccache's manual: the case told first ("five", "server") is rarer in the collection than what is asked
    # ("set up", "everyone"), and no sentence that answers holds it
    question = ("Five of us build on the same server and we'd like to share one ccache directory. What do we have "
                "to set up so that it works for everyone?")
    terms = _terms({"five": 1, "everyon": 3, "us": 8, "share": 28, "server": 39, "build": 67, "same": 83,
                    "so": 107, "directori": 110, "work": 128, "ccach": 129, "like": 147, "one": 150, "have": 162,
                    "up": 169, "set": 192}, units=1395)
    answer = sentence_terms(["Set the configuration option umask to 002. This ensures that cached files are "
                             "accessible to everyone in the group."])
    rarest = answer_scores(question, answer, terms, 1.0, 7)[0]
    asked_first = answer_scores(question, answer, terms, 1.0, 7, asked_clause_first=True)[0]
    assert rarest < asked_first <= 1.0
    # a word of the clause that no unit holds weighs nothing and takes no place among the seven: a sentence of
    # the case's words alone scores as it did
    case_only = sentence_terms(["Five of us share it."])
    unheld = ("Five of us build on the same server and we'd like to share one ccache directory. How should we "
              "configure it for everybody?")
    assert (answer_scores(unheld, case_only, terms, 1.0, 7, asked_clause_first=True)[0]
            == answer_scores(unheld, case_only, terms, 1.0, 7)[0] < 1.0)
    # nor do seven such words leave the one held word of the clause to cover the whole question
    many = ("Five of us build on the same server. Is there a knob my colleagues could tweak remotely over the vpn "
            "to use it safely and quietly?")
    terms_used = dataclasses.replace(terms, holding={**terms.holding, "use": (3, 300)})
    used_once = sentence_terms(["You can use it."])
    assert answer_scores(many, used_once, terms_used, 1.0, 7, asked_clause_first=True)[0] < 0.2
    # the answer gate on the coverage alone (the ranking's relevance is relative to a context of one section here)
    context = _titled(("ccache(1)", CCACHE_SHARING), terms=terms)
    turned_away = ExtractiveSummarizer(ExtractiveOptions(coverage_weight=1.0, asked_clause_first=False))
    assert turned_away.summarize(question, context).abstained
    answered = ExtractiveSummarizer(ExtractiveOptions(coverage_weight=1.0)).summarize(question, context)
    assert not answered.abstained
    assert answered.bullets[0].text == ("Set the configuration option umask to 002. This ensures that cached files "
                                        "are accessible to everyone in the group."), answered.bullets


VALGRIND_FAQ = """4.1. My program uses the C++ STL and string classes. Valgrind reports
'still reachable' memory leaks involving these classes at the exit of
the program, but there should be none.

First of all: relax, it's probably not a bug, but a feature. Many
implementations of the C++ standard libraries use their own memory pool
allocators.

4.2. The stack traces given by Memcheck (or another tool) aren't
helpful. How can I improve them?

If they're not long enough, use --num-callers to make them longer.

4.3. Valgrind 3.4 added origin tracking. It costs
some speed.

Origin tracking is on with --track-origins=yes.
"""


def test_a_hard_wrapped_faq_entry_heads_its_answer() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(VALGRIND_FAQ).blocks
    stated = dict(_statable_sentences(block, 3))
    # the asker's case, wrapped over lines, with or without a question after it, is no fact
    assert not any(s.startswith(("4.1. My program", "Valgrind reports", "4.2.")) for s in stated), list(stated)
    assert "STL and string classes" in stated["First of all: relax, it's probably not a bug, but a feature."]
    assert "How can I improve them?" in stated["If they're not long enough, use --num-callers to make them longer."]
    # a numbered paragraph that states, not in the asker's words, keeps its facts
    assert "It costs some speed." in {" ".join(s.split()) for s in stated}


def test_a_verb_ending_in_s_is_no_plural() -> None:
    # "Which file contains ...?" asks for one file: a word after "which" followed by a verb ending in s
    for specific in ("Which file contains the settings?", "Which package provides libfoo?",
                     "What flag enables verbose output?", "What license is attrs released under?"):
        assert question_form(specific) == "specific", specific
    assert question_form("Which features is libffi missing?") == "broad"

def test_steps_question_indexes_and_different_facts_are_left_as_they_are() -> None:
    from citesum.summarize.extractive import _statable_sentences, answer_scores
    from citesum.index.lexical import tokenize

    steps = ("1. I installed nginx from the package.\n\n2. I edited the config file.\n\n3. I reloaded nginx with "
             "systemctl.\n\nThen it served the page.\n\n3.1. I/O scheduling is done by the kernel's block layer.\n\n"
             "More text.\n")
    [block] = _context(steps).blocks
    stated = [sentence for sentence, _ in _statable_sentences(block, 3)]
    assert "I reloaded nginx with systemctl." in stated  # a list's step, not an FAQ's entry
    assert "3.1. I/O scheduling is done by the kernel's block layer." in stated  # "I/O" is not the asker
    index = "How do I install it?\nHow do I remove it?\nHow do I install it?\nRun the installer from the menu.\n"
    [block] = _context(index).blocks
    assert dict(_statable_sentences(block, 3))["Run the installer from the menu."] == "D1\nHow do I install it?\n"
    # a question about something else keeps all its words, capped or not
    terms = _terms({"point": 5})
    question = "What is the boiling point of mercury at sea level in kelvin and celsius degrees?"
    sentence = frozenset(tokenize(["The point is moot."])[0])
    assert answer_scores(question, [sentence], terms, 1.0, 7)[0] == answer_scores(question, [sentence], terms, 1.0)[0]


def test_an_faq_entry_ending_a_passage_heads_the_answer_the_next_one_opens_with() -> None:
    from citesum.summarize.extractive import _statable_sentences

    # the chunker cut Valgrind's FAQ after the entry, before its answer
    first = ("4.1. My program uses the C++ STL and string classes. Valgrind reports\n'still reachable' memory "
             "leaks involving these classes at the exit of\nthe program, but there should be none.")
    second = "First of all: relax, it's probably not a bug, but a feature. Many\nimplementations pool memory."
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 30), Passage("d1::1", "d1", 1, len(first) + 2,
                                                                             len(first) + 2 + len(second), second, 15))
    text = f"{first}\n{second}"
    block = ContextBlock(1, "d1", "Valgrind FAQ", text, 45, passages, 1.0)
    stated = dict(_statable_sentences(block, 3))
    assert not any(sentence.startswith(("4.1.", "Valgrind reports")) for sentence in stated), list(stated)
    assert "STL and string classes" in stated["First of all: relax, it's probably not a bug, but a feature."]


DIFF_MANUAL = ("The --minimal option makes diff try harder. This gives diff further opportunities to find a minimal "
               "output. Use the --color option to get colored output from diff, where red marks deleted lines.")


def _diff_terms() -> TermFrequencies:
    """diff's manual as a collection of 200 units: "diff" and "output" in most of them, "colored" in three."""
    from citesum.index.lexical import tokenize

    holding = {word: (1, 150) for word in set(tokenize([DIFF_MANUAL])[0])}
    holding["color"] = holding["colored"] = (1, 3)
    # a question's word the retrieved passages lack, though two units elsewhere hold it; and the asker's premise
    # word, in one unit
    holding["terminal"] = (1, 1)
    holding.update({word: (0, 2) for word in tokenize(["unified"])[0]})
    return TermFrequencies(3, 200, holding)


def test_a_specific_questions_sentence_without_its_rarest_asked_word_counts_less() -> None:
    from citesum.summarize.extractive import rarest_asked_word
    from citesum.index.lexical import tokenize

    terms = _diff_terms()
    [colored] = tokenize(["colored"])[0]
    assert rarest_asked_word("How do I get colored output from diff?", terms) == colored
    # the clause that asks, not the premise: "diff" is what this asker's case names, "colored" what they ask
    assert rarest_asked_word("My terminal shows diff in black and white. How do I get colored output?",
                             terms) == colored
    assert rarest_asked_word("How do I get colored output from diff?", None) is None
    # a word no retrieved passage holds is no sentence's to hold, however rare in the collection
    assert rarest_asked_word("How do I get colored unified output from diff?", terms) == colored
    # two words as rare as each other: the question asks about each as precisely, so neither is held against
    tied = TermFrequencies(3, 200, {**terms.holding, **{word: (1, 3) for word in tokenize(["deleted"])[0]}})
    assert rarest_asked_word("How do I get colored deleted lines from diff?", tied) is None
    # the sentence that never says "colored" counts less; the one that says it keeps its score
    engine = ExtractiveSummarizer()
    context = _context(DIFF_MANUAL, terms=terms)
    sentences = engine._sentences(context)
    engine._score(question := "How do I get colored output from diff?", sentences,
                  engine.embedder.encode_documents([s.text for s in sentences]), terms)
    before = [s.answer for s in sentences]
    engine._weigh_named(question, context, sentences, specific=True)
    for sentence, was in zip(sentences, before):
        held = "colored" in sentence.text
        assert sentence.answer == pytest.approx(was if held else 0.9 * was), sentence.text
    assert sum("colored" in s.text for s in sentences) == 1 and len(sentences) == 3
    with pytest.raises(ConfigError, match="rarest_word_factor"):
        ExtractiveOptions(rarest_word_factor=1.5)


BORG_PRUNE = """The prune command prunes a repository by deleting all archives not matching any of the specified
retention options. This command is normally used by automated backup scripts wanting to keep a certain number of
historic backups. As an example, "-d 7" means to keep the latest backup on each day, up to 7 most recent days
with backups. The --keep-last N option is doing the same as --keep-secondly N and keeps the last N archives."""


def test_a_question_about_an_option_no_passage_writes_is_abstained_on() -> None:
    # borg's quick start names prune and its --keep-* options, never --keep-within: "keep" and "within" are
    # everywhere, so a sentence about another option answered (the seventh realdocs split's seventh-u03)
    summary = ExtractiveSummarizer().summarize("What does the --keep-within option of borg prune do?",
                                               _context(BORG_PRUNE, MANUAL))
    assert summary.abstained and summary.bullets == ()
    assert "'--keep-within'" in summary.notes[0]
    # the option a passage writes is asked about as before
    answered = ExtractiveSummarizer().summarize("What does the --keep-last option of borg prune do?",
                                                _context(BORG_PRUNE, MANUAL))
    assert not answered.abstained
    assert any("--keep-last N option" in bullet.text for bullet in answered.bullets)
    # a short option may be written apart from its value or combined with others: it is not looked for
    from citesum.summarize.extractive import unwritten_options

    assert unwritten_options("What does the -Tpdf flag of dot do? And make -j4?", ["dot -T pdf ... make -j 4"]) == []
    assert unwritten_options("What does --keep-within do?", ["keep_within = 7d"]) == []  # a configuration key
    # a page that writes its hyphens as no line may break at (Unicode's non-breaking hyphen) writes the option
    assert unwritten_options("What does --disable-epoll do?", ["Use \u2011\u2011disable\u2011epoll."]) == []


#: a plain-text FAQ as mail-server FAQs write one: "Q:" and "A:" labels, hard-wrapped, and a "blank" line that
#: holds a space; the chunker cut the passage after the entry's first sentence
RESOLVER_FAQ_PASSAGE = (
    "Even though I list our office nameserver first in /etc/resolv.conf, it\n"
    "   is not asked first: the forwarder seems not to use the nameservers in the\n"
    "   order given. What am I doing wrong?\n"
    " \n"
    "A: By default, the forwarder treats all the nameservers it knows about as\n"
    "   equal and picks the fastest one. To make it use the servers in order,\n"
    "   give it the --strict-order flag.\n")


def test_the_paragraph_above_an_faqs_answer_is_the_askers_case_even_cut_from_its_q() -> None:
    from citesum.segment import segments
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(RESOLVER_FAQ_PASSAGE).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: the asker's case (its "Q:" in the passage before) was stated as a fact
    assert not any(sentence.startswith("Even though") for sentence in stated), list(stated)
    answer = next(sentence for sentence in stated if "treats all the nameservers" in sentence)
    assert "What am I doing wrong?" in stated[answer]
    # the answer's sentence leaves the FAQ's label out, as an item's leaves its marker
    assert answer.startswith("By default,")
    text = "Q: Can it cache to disk?\n\nAnswer: No, that facility is not provided.\n"
    assert [text[u.start:u.end] for u in segments(text)] == ["Q: Can it cache to disk?",
                                                              "No, that facility is not provided."]
    # a line of spaces parts paragraphs for a numbered FAQ's entry too: the one below is not its premise
    numbered = ("(12) The database did not get smaller. Is this a bug?\n \nNo. Space is reused. The file keeps "
                "its size until you vacuum it.\n")
    [block] = _context(numbered).blocks
    assert "Is this a bug?" in dict(_statable_sentences(block, 3))["The file keeps its size until you vacuum it."]


def test_a_how_do_i_question_is_answered_by_an_instruction_not_by_the_askers_trouble() -> None:
    from citesum.summarize.extractive import expected_answer, holds_answer

    for asks_what_to_do in ("How do I let it run in the background?", "How can we keep them running?",
                            "lftp just sits at 'Making data connection'. What can I try?",
                            "Limiting with ~L is slow. Is there a faster way to write that?", "How to stop it?"):
        assert expected_answer(asks_what_to_do) == "method", asks_what_to_do
    # what to do is asked only where the clause that asks opens with it
    for other in ("How does the forwarder pick a nameserver?", "Are these real, and what should I do?",
                  "Is libffi thread-safe?"):
        assert expected_answer(other) != "method", other
    for instruction in ("To prevent those input checks, use the -nostdin option in the invocation.",
                        "You need to set lingering mode through loginctl.", "Try \"set ftp:prefer-epsv no\".",
                        "It may be possible to recover data from the undamaged blocks."):
        assert holds_answer(instruction, "method"), instruction
    trouble = "If you run the encoder in the background, you may find that its process suspends."
    assert not holds_answer(trouble, "method")
    trouble = "If you let the encoder run in the background, you may find that its process suspends."
    manual = (f"Running in the background\n\n{trouble} There may be a message like suspended (tty output). "
              "The encoder reads the console while it works. Start the encoder with the -nostdin option so that "
              "it can run in the background.\n")
    terms = _terms({"run": 9, "background": 3, "encod": 20, "suspend": 1, "nostdin": 1, "let": 5, "start": 8})
    summary = ExtractiveSummarizer().summarize(
        "I start a long encoder job with & and it stops at once. How do I let it run in the background?",
        _context(manual, terms=terms))
    # before: the sentence that tells the asker's trouble again
    assert [b.text for b in summary.bullets][:1] == [
        "Start the encoder with the -nostdin option so that it can run in the background."]


def test_an_faqs_q_entry_ending_a_passage_heads_the_answer_the_next_one_opens_with() -> None:
    from citesum.summarize.extractive import _statable_sentences

    # a compressor's FAQ, cut by the chunker between the entry and its answer (whose "A:" label the next
    # passage, starting at the answer's first sentence, leaves out)
    first = ('Q:  I need to use a script that runs "xz -9". On a system with 256 MiB\n    of RAM, xz says that it '
             "cannot allocate memory. Can I make the\n    script work without modifying it?")
    second = ("Set a default memory usage limit for compression. You can do it in a\n    shell initialization "
              "script such as ~/.bashrc.")
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 30),
                Passage("d1::1", "d1", 1, len(first) + 8, len(first) + 8 + len(second), second, 20))
    block = ContextBlock(1, "d1", "XZ FAQ", f"{first}\n{second}", 50, passages, 1.0)
    stated = dict(_statable_sentences(block, 3))
    # before: the asker's case was stated, and the answer had no heading to say what it answers
    assert not any("cannot allocate memory" in sentence for sentence in stated), list(stated)
    assert "without modifying it?" in stated["Set a default memory usage limit for compression."]


def test_faq_labels_are_read_only_where_an_faq_is() -> None:
    from citesum.summarize.extractive import _statable_sentences, expected_answer

    def stated(text: str) -> dict[str, str]:
        [block] = _context(text).blocks
        return {" ".join(s.split()): h for s, h in _statable_sentences(block, 3)}

    # an entry and its answer on lines of one paragraph: each answer is stated, under its own question
    lines = ("Q: Does it support IPv6?\nA: Yes. IPv6 is fully supported since version 2.0 of the server.\n"
             "Q: Can it cache to disk?\nA: No. The cache is held in memory and is lost on restart.\n")
    found = stated(lines)
    assert found["IPv6 is fully supported since version 2.0 of the server."] == "D1\nQ: Does it support IPv6?\n"
    # (each "A:" opens a paragraph of its own, which leaves its label out: the second's ran on from the question)
    assert found["No. The cache is held in memory and is lost on restart."] == "D1\nQ: Can it cache to disk?\n"
    unlabelled = "Q: How do I reset the cache?\nRun the tool with the reset flag. It clears every cached entry.\n"
    assert "Run the tool with the reset flag." in stated(unlabelled)
    # a lettered list, an author's initial and a figure's legend are no FAQ
    for prose, kept in (("The installer needs root rights on the machine.\n\nA. Run the installer as root.\n",
                         "The installer needs root rights on the machine."),
                        ("Figure 3 shows the two probes on the board.\n\nA: the input probe, before the filter.\n",
                         "Figure 3 shows the two probes on the board.")):
        assert kept in stated(prose), prose
    assert "A: the input probe, before the filter." in stated("Figure 3 shows the probes.\n\nA: the input probe, "
                                                              "before the filter.\n")
    # the asker's case told after the question goes with it
    after = ("Q: Why does the import fail on CentOS 7? I have tried both the wheel and the sdist.\n\nA: The "
             "wheel is built for glibc 2.28 and CentOS 7 ships glibc 2.17.\n")
    assert stated(after)["The wheel is built for glibc 2.28 and CentOS 7 ships glibc 2.17."].startswith(
        "D1\nQ: Why does the import fail on CentOS 7? I have tried")
    # "How can I tell ...?" asks for a fact, "What can I use zstd for?" for uses: neither for an instruction
    for not_a_method in ("How can I tell whether libffi is thread-safe?", "What can I use zstd for?",
                         "What can I do with citesum?"):
        assert expected_answer(not_a_method) is None, not_a_method


def test_a_question_ending_a_passage_heads_only_the_documents_next_passage() -> None:
    from citesum.summarize.extractive import _statable_sentences

    first = "Mirroring works over SSH as well as locally. But what happens when the link drops mid-transfer?"
    far = "The configuration file lives in /etc/tool/tool.conf and is read once at start."
    heading = f"Configuration\n\n{far}"

    def headings(second: str, ordinal: int) -> dict[str, str]:
        passages = (Passage("d1::2", "d1", 2, 0, len(first), first, 20),
                    Passage(f"d1::{ordinal}", "d1", ordinal, 500, 500 + len(second), second, 20))
        block = ContextBlock(1, "d1", "Tool", f"{first}\n{second}", 40, passages, 1.0)
        return dict(_statable_sentences(block, 3))

    assert headings(far, 9)[far] == "Tool\n\n"  # passage 9 is not what passage 2's question leads to
    assert "link drops" in headings(far, 3)[far]
    assert headings(heading, 3)[far] == "Tool\nConfiguration\n"  # a heading starts its own section


def test_an_faqs_q_entry_ending_a_passage_is_the_askers_case_when_its_answers_label_was_left_out() -> None:
    from citesum.summarize.extractive import _statable_sentences

    # vsftpd's FAQ: the chunker cut after the "Q)" entry and left the "A) " label out of both passages
    first = ("Put check_shell=NO in your\n/etc/vsftpd.conf.\n\nQ) Help! Uploads or other write commands give me "
             "\"500 Unknown command.\".")
    second = ("By default, write commands, including uploads and new directories, are\ndisabled.\n\n"
              "Q) Does vsftpd support IPv6?")  # the next entry
    passages = (Passage("d1::7", "d1", 7, 0, len(first), first, 30),
                Passage("d1::8", "d1", 8, len(first) + 4, len(first) + 4 + len(second), second, 15))
    block = ContextBlock(1, "d1", "vsftpd FAQ", f"{first}\n{second}", 45, passages, 1.0)
    stated = {" ".join(text.split()): heading for text, heading in _statable_sentences(block, 3)}
    assert not any("give me" in sentence for sentence in stated), list(stated)  # before: stated as a fact
    assert "500 Unknown command" in stated["By default, write commands, including uploads and new directories, "
                                           "are disabled."]
    # a "Q)" entry that a paragraph of its own follows in the same passage is no entry left open, and neither is
    # one with no next passage: what follows it unlabelled is its answer
    for kept in ("Q) Help! Uploads fail.\n\nUploads are disabled by default in this release.",
                 "Q: Uploads fail with error 500.\nUploads are disabled by default in this release.\n"):
        [block] = _context(kept).blocks
        assert "Uploads are disabled by default in this release." in dict(_statable_sentences(block, 3)), kept


def test_an_answer_under_an_faqs_question_of_the_kind_asked_is_of_that_kind() -> None:
    from citesum.summarize.extractive import _entry_expects, _statable_sentences

    # getmail's FAQ answers "How do I run getmail in daemon mode?" with no word of doing: under its entry, it is
    # still an answer to how to (it counted as untyped, at 0.7 of its score)
    faq = ("How do I run getmail in \"daemon\" mode?\n\ngetmail does not have, and does not need, any special "
           "\"daemon mode\".\n\nWhy is getmail slow to start?\n\nThe lookup of the host's full name takes long.\n\n"
           "The program does not have, and does not need, any special setup.\n")
    context = _context(faq)
    summarizer = ExtractiveSummarizer()
    sentences = summarizer._sentences(context)
    summarizer._score("How do I run getmail as a daemon every half hour?", sentences,
                      summarizer.embedder.encode_documents([s.text for s in sentences]), context.terms)
    typed = {s.text.split(",")[0]: s.typed for s in sentences}
    assert typed["getmail does not have"] is True
    # a question wrapped over lines, as a plain-text FAQ wraps it, heads its answer all the same
    wrapped = _context(faq.replace("run getmail in", "run getmail in\n", 1)).blocks
    assert _entry_expects(next(heading for text, heading in _statable_sentences(wrapped[0], 3)
                               if text.startswith("getmail does not"))) == "method"
    # the same words under a question of another kind, or under no question, are not
    assert typed["The lookup of the host's full name takes long."] is False
    assert typed["The program does not have"] is False


def test_a_sections_heading_heads_the_documents_next_passage_too() -> None:
    from citesum.summarize.extractive import _statable_sentences

    # the chunker cut MIT Kerberos' troubleshooting page after an error's heading, before what it means
    first = ("Errors seen by admins¶\nKDC has no support for encryption type while getting initial credentials¶\n"
             "credential verification failed: KDC has no support for encryption type¶")
    second = ("This most commonly happens when trying to use a principal with only\nDES keys, in a release which "
              "disables DES by default.")

    def section(ordinal: int, first: str = first) -> str:
        passages = (Passage("d1::4", "d1", 4, 0, len(first), first, 30),
                    Passage(f"d1::{ordinal}", "d1", ordinal, 500, 500 + len(second), second, 20))
        block = ContextBlock(1, "d1", "Troubleshooting", f"{first}\n{second}", 50, passages, 1.0)
        return {" ".join(text.split()): heading for text, heading in _statable_sentences(block, 3)}[
            " ".join(second.split())]

    assert "KDC has no support for encryption type" in section(5)
    assert section(9) == "Troubleshooting\n\n"  # passage 9 is not under passage 4's last heading
    # an FAQ's question heads its own entry, not the next passage as a section's title would; nor does an entry
    # that only states the asker's case
    asked = "Is DES still supported?\n\nIt is off by default since release 1.7 of MIT krb5."
    assert "Is DES still supported?" not in section(5, asked)
    told = ("Memory leaks\n\n4.1. My program uses the C++ STL and string classes. Valgrind reports leaks.\n\n"
            "This is expected and nothing to worry about.")
    assert "My program uses" not in section(5, told) and "Memory leaks" not in section(5, told)


def test_an_faqs_entry_between_q_and_a_labels_is_the_askers_case_whether_it_asks_or_not() -> None:
    from citesum.summarize.extractive import _statable_sentences

    faq = ("Q) Help! I'm getting the error message \"refusing to run with writable root\".\n"
           "A) The cause of this message is usually dodgy ownership of the ftp home directory.\n"
           "Q) Does the server support a limit on the number of users connected?\n"
           "A) Yes, indirectly. Run it in standalone mode with a connection limit.\n")
    [block] = _context(faq).blocks
    stated = {" ".join(s.split()): h for s, h in _statable_sentences(block, 3)}
    # before: the asker's error message was stated as a fact
    assert not any("I'm getting the error message" in sentence for sentence in stated), list(stated)
    assert "refusing to run" in stated["The cause of this message is usually dodgy ownership of the ftp home "
                                       "directory."]
    assert "Run it in standalone mode with a connection limit." in stated


LSOF_FAQ = """Why is lsof so slow?

Lsof may appear to be slow if network address to host name resolution is slow. To see if name lookup is causing
lsof to be slow, turn it off with the -n option.

Lsof may be slow if UID to login name lookups are slow. Suppress them with the -l option.

The lsof source code is distributed under a BSD-style license that allows redistribution.
"""


def test_a_question_that_asks_two_things_is_broad() -> None:
    # before: each was specific, answered by at most two sentences about as good as the best one
    for question in ["lsof takes forever. What can make it that slow, and which options should I try to speed it up?",
                     "What was it doing, and how do I find and clean up its cache?",
                     "Why does it fail and can I fix it?", "Why, and what are the ways around it?"]:
        assert question_form(question) == "broad", question
    # one question with "and" inside it, or an alternative, asks once
    for question in ["How do I find files that are large and are owned by root?",
                     "Is ddrescue the best tool for it, or is there something better?",
                     "Why does it crash and burn?", "How do I check whether a path exists and is a directory?",
                     "How do I run a command that reads stdin and does the same as cat?",
                     "Why does make rebuild files that are up to date and have the same timestamp?",
                     "How do I find files that are large and which are owned by root?",
                     "What is the difference between a tag and what git calls a ref?",
                     "Why does the job fail when the disk is full and when it is not?"]:
        assert question_form(question) == "specific", question
    # each ask gets its facts: more than the two sentences a specific question gets
    terms = _terms({"lsof": 40, "slow": 4, "speed": 6, "option": 12}, units=300)
    summary = ExtractiveSummarizer().summarize("Why is lsof slow and how do I speed it up?",
                                               _titled(("lsof FAQ", LSOF_FAQ), terms=terms))
    texts = [b.text for b in summary.bullets]
    assert len(texts) >= 3 and not any("license" in text for text in texts), texts


CACHE_PAGE = """How to re-run failed tests

The plugin provides two command line options to rerun failures from the last pytest invocation:
- --lf, --last-failed - to only re-run the failures.
- --ff, --failed-first - to run the failures first and then the rest of the tests.

For cleanup (usually not needed), a --cache-clear option allows to remove all cross-session cache contents.
"""


def test_an_option_opening_a_list_item_is_stated() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _context(CACHE_PAGE).blocks
    stated = [sentence for sentence, _ in _statable_sentences(block, 3)]
    # before: a sentence opening with "-" was a stray list marker's, never stated
    assert "--lf, --last-failed - to only re-run the failures." in stated
    summary = ExtractiveSummarizer().summarize("How do I re-run only the failures of my last pytest run?",
                                               _context(CACHE_PAGE))
    assert [b.text for b in summary.bullets] == ["--lf, --last-failed - to only re-run the failures."]


GETMAIL_FAQ = """I'm running getmail from cron. How do I temporarily stop it?

Some people ask about temporarily stopping getmail from running from a cron job, because the mail server is down.
The easiest method is to comment out getmail from your crontab file.

I run getmail from a shell script. It works well there.
"""


def test_the_askers_case_on_the_line_of_its_question_heads_the_answer_unnumbered() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _titled(("getmail frequently-asked questions (FAQs)", GETMAIL_FAQ)).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: an FAQ entry without a number ("(12)", "4.6.") kept its premise as a fact to state
    assert "I'm running getmail from cron." not in stated
    assert ("I'm running getmail from cron. How do I temporarily stop it?"
            in stated["The easiest method is to comment out getmail from your crontab file."])
    # a first-person line that asks nothing keeps its statements
    assert "I run getmail from a shell script." in stated
    # a tutorial's author speaks as "I" and asks too: outside a document of questions, the statement stays
    advice = "My advice is to give the cache a quarter of the memory. Why a quarter?\n\nThe rest goes to the pages.\n"
    [block] = _titled(("Tuning the cache", advice)).blocks
    assert "My advice is to give the cache a quarter of the memory." in dict(_statable_sentences(block, 3))


#: lp_solve's FAQ as its web page reads: each entry a typed "- " and its question in bold, its answer below
LP_SOLVE_FAQ = """ - When I call the API call solve(), several messages are printed on screen. How can I disable those messages?
Use the set_verbose API call. The default is NORMAL (4).
 - lp_solve fails to solve my model or it takes a very long time to solve my model. What can I do?
lp_solve has a lot of options. Consider to use the following:
"""


def test_the_askers_case_on_a_bulleted_line_of_its_question_heads_the_answer() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _titled(("lp_solve Frequently Asked Questions", LP_SOLVE_FAQ)).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: the asker's trouble was a fact to state ("lp_solve fails to solve my model ...")
    assert not any(sentence.startswith("lp_solve fails") for sentence in stated), stated
    assert stated["lp_solve has a lot of options."].splitlines()[-1] == (
        "lp_solve fails to solve my model or it takes a very long time to solve my model. What can I do?")
    # an answer's bulleted list, its item asking a question of its own, keeps the item's statement
    answer = ("How do I make the solver faster?\n\nThere are several options to try:\n- Presolve removes redundant "
              "rows and columns. Why not turn it on by default?\n- Scaling improves the numerical stability of the "
              "model considerably.\n")
    [block] = _titled(("lp_solve Frequently Asked Questions", answer)).blocks
    assert "Presolve removes redundant rows and columns." in dict(_statable_sentences(block, 3))
    # outside a document of questions, a bulleted statement before a question is stated
    [block] = _titled(("Tuning the solver", LP_SOLVE_FAQ)).blocks
    assert "lp_solve fails to solve my model or it takes a very long time to solve my model." in dict(
        _statable_sentences(block, 3))


#: OpenOCD's FAQ as its web page reads: each entry's title, the asker's trouble told as a statement, the answer
OPENOCD_FAQ = """Missing: cygwin1.dll
OpenOCD complains about a missing cygwin1.dll.
Make sure you have Cygwin installed. When using Cygwin, try launching OpenOCD from the Cygwin shell.
Data Aborts
When debugging with OpenOCD and GDB (plain GDB, Insight, or Eclipse), I get lots of "Error: memory read caused data abort".
The errors are non-fatal, and are the result of GDB trying to trace stack frames beyond the last valid frame.
Which adapter should I buy?
I suggest an adapter that supports adaptive clocking. It keeps the JTAG clock in step with the target.
"""


def test_the_askers_trouble_in_the_first_person_under_an_faqs_title_heads_the_answer() -> None:
    from citesum.summarize.extractive import _statable_sentences

    [block] = _titled(("FAQ (OpenOCD User's Guide)", OPENOCD_FAQ)).blocks
    stated = dict(_statable_sentences(block, 3))
    # before: the trouble was stated as the answer to a question about it
    trouble = ('When debugging with OpenOCD and GDB (plain GDB, Insight, or Eclipse), I get lots of "Error: memory read '
               'caused data abort".')
    assert trouble not in stated
    assert trouble in stated["The errors are non-fatal, and are the result of GDB trying to trace stack frames beyond "
                             "the last valid frame."]
    # a trouble told without "I" is a statement as before; under a question, "I" is the answer's author speaking
    assert "OpenOCD complains about a missing cygwin1.dll." in stated
    assert "I suggest an adapter that supports adaptive clocking." in stated
    # outside a document of questions, a first-person line under a title is a statement
    [block] = _titled(("OpenOCD notes", OPENOCD_FAQ)).blocks
    assert trouble in dict(_statable_sentences(block, 3))
    # a question underlined asks all the same; a preface in the first person above the next question is no
    # trouble; nor is a title's Roman numeral ("Part I covers ...")
    other = ("Which RAID level should I use?\n" + "~" * 30 + "\nI suggest RAID1/10 for most setups. It is simple.\n\n"
             "About this FAQ\nI maintain this list in my spare time. Corrections are welcome.\n"
             "How do I build it?\nRun make in the top directory.\n\n"
             "Layout\nPart I covers the installation on every system.\nThe rest covers the daily use of the tool.\n")
    [block] = _titled(("mdadm FAQ", other)).blocks
    stated = dict(_statable_sentences(block, 3))
    for sentence in ("I suggest RAID1/10 for most setups.", "I maintain this list in my spare time.",
                     "Part I covers the installation on every system."):
        assert sentence in stated


ATTRS = """Hashing
=======

Some objects have hash codes which are expensive to compute. If such objects are to be stored in hash-based
collections, it can be useful to compute the hash codes only once and then store the result on the object.
Set cache_hash=True for that; the default is False.

Slots
=====

Slotted classes use less memory and are a little faster to access their attributes.
"""


def test_the_sentence_going_on_from_a_specific_answer_is_stated_with_it() -> None:
    question = "My attrs objects are expensive to hash; can attrs remember the hash instead of computing it every time?"
    context = _context(ATTRS)
    going_on = ExtractiveSummarizer(ExtractiveOptions(bullets=5)).summarize(question, context)
    # the manual names the case in one sentence and answers it in the next: before, only the first was stated
    assert [b.text for b in going_on.bullets] == [
        "Some objects have hash codes which are expensive to compute.",
        "If such objects are to be stored in hash-based collections, it can be useful to compute the hash codes only "
        "once and then store the result on the object."]
    assert going_on.bullets[1].citations == ("d1",)
    alone = ExtractiveSummarizer(ExtractiveOptions(bullets=5, next_sentence_ratio=None)).summarize(question, context)
    assert [b.text for b in alone.bullets] == ["Some objects have hash codes which are expensive to compute."]
    # never across a heading: the sentence under the next one is another section's
    slots = ExtractiveSummarizer(ExtractiveOptions(bullets=5)).summarize("Is the default of cache_hash False?",
                                                                         context)
    assert all("Slotted" not in b.text for b in slots.bullets)
    # within the word limit: the sentence going on is left out when it would go past it
    limited = ExtractiveSummarizer(ExtractiveOptions(bullets=5, max_words=20)).summarize(question, context)
    assert [b.text for b in limited.bullets] == ["Some objects have hash codes which are expensive to compute."]
    with pytest.raises(ConfigError):
        ExtractiveOptions(next_sentence_ratio=1.5)


def test_the_sentence_going_on_is_never_another_passage_of_the_block() -> None:
    question = "My attrs objects are expensive to hash; can attrs remember the hash instead of computing it every time?"
    first = "Some attrs objects have hash codes which are expensive to compute every time.\n"
    far = "Such attrs objects are stored in hash-based collections.\n"
    # one document's passages far apart (ordinals 0 and 7) in one block, as the packer puts them
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, len(first.split())),
                Passage("d1::7", "d1", 7, 900, 900 + len(far), far, len(far.split())))
    text = f"{first}\n{far}"
    context = Context((ContextBlock(1, "d1", "D1", text, len(text.split()), passages, 1.0),), "original", 10_000, 100)
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=5, next_sentence_ratio=0.0)).summarize(question, context)
    assert [b.text for b in summary.bullets] == [first.strip()]


def test_an_faq_entry_that_asks_the_question_answers_it_below_the_answer_floor() -> None:
    # runit's FAQ: its entry's question holds the asker's words ("user", "services"), its answer few of them; the
    # best sentence scored under the floor, and the question was left unanswered with the answer as a lead
    question = "Only root may restart our services. Can an ordinary user be allowed to do it?"
    answer = ("Yes, you simply need to give that user write access to the ./supervise/ subdirectory of the service "
              "directory.")
    rest = ("\n\nHow do I make a service start at boot?\n\nCreate a symbolic link in /service/ that points to the "
            "service directory; the supervisor picks it up within five seconds.\n")
    faq = _context("How can I allow a user to control one of the services?\n\n" + answer + rest)
    stated = ExtractiveSummarizer().summarize(question, faq)
    assert [b.text for b in stated.bullets] == [answer]  # that sentence alone
    assert ExtractiveSummarizer(ExtractiveOptions(entry_question_share=None)).summarize(question, faq).abstained
    # under a heading that asks nothing, or asks of something else, the same sentence is no answer
    for heading in ("Permissions of services", "How can I see the log of a daemon?"):
        assert ExtractiveSummarizer().summarize(question, _context(f"{heading}\n\n{answer}{rest}")).abstained, heading
    with pytest.raises(ConfigError):
        ExtractiveOptions(entry_question_share=1.5)
    # the asker's words that no document holds ("nasty", "rid") are in no entry's question either: they do not
    # count against the share (TiMidity's FAQ, the thirtieth realdocs split's s04: two of eleven words, under it)
    timidity = ("Q: Some files have awful clicks and pops.\n\nFind out which patch is responsible for the clicking "
                "(try \"timidity -P<patch> midi/test-decay\"). Add \"strip=tail\" in the config file after its "
                "name.\n\nQ: How do I make TiMidity write a WAV file instead of playing it?\n\nUse the -Ow option, "
                "and name the output with -o.\n")
    question = "Certain MIDI files play with nasty clicking noises in TiMidity. How do I get rid of them?"
    held = set(tokenize([timidity])[0]) | {"certain", "get", "them", "nois", "play"}
    floorless = ExtractiveOptions(min_answer=0.99, second_opinion=None)  # only the entry's question can answer
    stated = ExtractiveSummarizer(floorless).summarize(question, _context(timidity, terms=_terms(
        {word: 5 for word in held})))
    assert [b.text for b in stated.bullets] == ['Find out which patch is responsible for the clicking (try '
                                                '"timidity -P<patch> midi/test-decay").']
    # an entry's question with the asker's case told after it, or a problem's label, is the entry's question too
    from citesum.summarize.extractive import entry_question

    for heading in ("FAQ-COM140 : HOW CAN I EXCLUDE MY IP ADDRESS FROM STATS ? PROBLEM: I don't want my own IP.",
                    "Why does the import fail, and what can I do?",
                    "PROBLEM: AWStats seems to work but I have no image shown."):
        assert entry_question(f"Frobstat FAQ\n{heading}\n") == heading
    for heading in ("Setup", "Restricting users", "Notes on the Q:", "The problem of long lines"):
        assert entry_question(f"Frobstat FAQ\n{heading}\n") == "", heading


PROFTPD_HOWTO = ("Restricting users\n\nThe most common configuration requested is to restrict users to their home "
                 "directories, which can be done simply by adding the following line to your proftpd.conf:\n\n```\n"
                 "DefaultRoot ~\n```\n\nThe tilde stands for the home directory of the user who logs in.\n")


def test_a_sentence_that_introduces_code_is_stated_with_the_code() -> None:
    from citesum.responses import summary_response
    from citesum.summarize.extractive import _statable_sentences
    from citesum.summarize.verify import check_bullet, context_verifier

    # before: a sentence ending with a colon was no whole sentence, never stated; a how-to's answer is often
    # the line it introduces ("How do I unmount sshfs?" got a sentence about mounting)
    question = "How do I restrict proftpd users to their home directories?"
    context = _context(PROFTPD_HOWTO)
    [bullet] = ExtractiveSummarizer().summarize(question, context).bullets
    assert bullet.text.endswith("by adding the following line to your proftpd.conf:")
    assert bullet.code == "DefaultRoot ~"
    # every front end's JSON shows it, and a repaired citation keeps it
    summary = ExtractiveSummarizer().summarize(question, context)
    assert summary_response(summary, {}, query=question)["bullets"][0]["code"] == "DefaultRoot ~"
    repaired, _ = check_bullet(context_verifier(context), context, bullet, repair=True)
    assert repaired.code == "DefaultRoot ~"
    # a sentence ending with a colon that introduces prose, or nothing, is still no whole sentence
    for text in (PROFTPD_HOWTO.replace("```\nDefaultRoot ~\n```", "Add it at the top of the file."),
                 PROFTPD_HOWTO.split("\n\n```")[0]):
        assert not any(s.endswith(":") for s, _ in _statable_sentences(_context(text).blocks[0], 3)), text
    # a block fenced with tildes, or naming its language, or indented in a list item, shows its lines alone
    for fenced in ("~~~\nDefaultRoot ~\n~~~", "```conf\n    DefaultRoot ~\n```"):
        [bullet] = ExtractiveSummarizer().summarize(question, _context(PROFTPD_HOWTO.replace(
            "```\nDefaultRoot ~\n```", fenced))).bullets
        assert bullet.code == "DefaultRoot ~", fenced
    # reStructuredText's "::" marks the literal block below; in a text read as plain text (lighttpd's ssl.txt,
    # from a new user's trial: "... cat them together into a single PEM file: ::"), the sentence is stated with
    # the colon reStructuredText shows (before: no whole sentence, and the question was turned away)
    for marked in (".conf::", ".conf: ::"):
        [bullet] = ExtractiveSummarizer().summarize(question, _context(PROFTPD_HOWTO.replace(".conf:", marked))
                                                    ).bullets
        assert bullet.text.endswith("by adding the following line to your proftpd.conf:") and bullet.code, marked
    # "::" with no block below it is no sentence's end; nor is " ::", which reStructuredText shows as nothing (and
    # which may be IPv6's address: "... set the bind address to ::")
    text = PROFTPD_HOWTO.replace(".conf:", ".conf::").replace("```\nDefaultRoot ~\n```", "Add it at the top.")
    assert not any(s.endswith(":") for s, _ in _statable_sentences(_context(text).blocks[0], 3)), text
    for marked in (".conf ::", ".conf to ::"):
        stated = [s for s, _ in _statable_sentences(_context(PROFTPD_HOWTO.replace(".conf:", marked)).blocks[0], 3)]
        assert not any("proftpd" in sentence for sentence in stated), marked
    # a long block shows its first lines, and says that more follow
    long = PROFTPD_HOWTO.replace("DefaultRoot ~", "\n".join(f"DefaultRoot ~ group{n}" for n in range(30)))
    [bullet] = ExtractiveSummarizer().summarize(question, _context(long)).bullets
    assert bullet.code.splitlines()[0] == "DefaultRoot ~ group0" and bullet.code.splitlines()[-1] == "…"
    assert len(bullet.code.splitlines()) == 13


def test_a_sentence_ending_with_a_full_stop_that_points_ahead_shows_its_code() -> None:
    # debmake-doc: "Adding the following code to the debian/rules file ensures ..." is whole as written, and the
    # code under it is the answer; before, its bullet named the code without showing it
    question = "How do I make sure the package builds under a UTF-8 locale?"
    intro = "Adding the following code to the debian/rules file ensures building the program under the UTF-8 locale."
    code = "export LC_ALL = C.UTF-8"
    text = f"Locale\n\nThe default locale of the build environment is C.\n\n{intro}\n\n```\n{code}\n```\n"
    [bullet, *_] = ExtractiveSummarizer().summarize(question, _context(text)).bullets
    assert (bullet.text, bullet.code) == (intro, code)
    # a full stop after words that point at nothing ahead, or at a part of the document, introduces no code
    for plain in (text.replace("the following code", "this setting"),
                  text.replace("the following code", "the settings of the following sections"),
                  text.replace("Adding the following code", "Like so many packages, adding a line")):
        assert all(b.code == "" for b in ExtractiveSummarizer().summarize(question, _context(plain)).bullets), plain


def test_a_name_the_asker_tells_before_asking_is_no_missing_subject() -> None:
    # twentieth's clamav question and tenth's R question: a word of the asker's case that no document uses
    # ("tripping", "CSV") turned the question away, though the documents answer the clause that asks
    terms = _terms({"column": 4, "factor": 6, "numer": 5, "read": 9, "measur": 2, "real": 3})
    told = "I read a CSV into R and a column came in as a factor. How do I get the real numbers?"
    assert missing_subjects(told, terms) == []
    # the same name in the clause that asks is what the question is about, and no document mentions it
    assert missing_subjects("I have measurements in a factor. How do I read a CSV into R?", terms) == ["CSV"]
    # a question of one sentence asks with all its words, a phrase put before its question word too; a name is
    # the same name in any case
    assert missing_subjects("Can R read a CSV with a factor column?", terms) == ["CSV"]
    assert missing_subjects("With a CSV file, how do I read the column?", terms) == ["CSV"]
    assert missing_subjects("I read a CSV into R. How do I read my csv file?", terms) == ["CSV"]
    answer = "To get the real numbers back from a factor column, use as.numeric(levels(f))[f] on it."
    summary = ExtractiveSummarizer().summarize(told, _context(f"Factors\n\n{answer}\n", terms=terms))
    assert not summary.abstained
    # a command-line option no passage writes is what a question asks about only where it asks
    manual = ("Installing\n\nTo install the library, run make install as root.\n\nOn Debian, use the package manager "
              "to install the library.\n")
    install = _terms({"install": 5, "librari": 3, "run": 6, "make": 4, "root": 2, "use": 8, "packag": 3, "manag": 2,
                      "system": 5})
    for question, abstains in (("I run the build with --emscripten-mode. How do I install the library?", False),
                               ("How do I install the library with --emscripten-mode?", True)):
        assert ExtractiveSummarizer().summarize(question, _context(manual, terms=install)).abstained is abstains


def test_a_program_that_sits_forever_reports_errors_or_never_starts_is_a_trouble_told() -> None:
    # nineteenth's and twentieth's troubles, told of a program with no asker in them: each was a topic, answered
    # with five ungated bullets
    for trouble in ["lynis audit system just sits there forever while it is checking the group files",
                    "rsyslogd -N1 run against the remote config reports errors about rulesets defined somewhere else",
                    "Jobs get their nodes but the tasks never start on some of them, and the log says it expired",
                    "The stats pages come up with all the numbers but none of the little images or graphs show"]:
        assert question_form(trouble) == "specific", trouble
    # an event of the news told with the same words, in a clause of its subject, names a subject
    for topic in ["The reforms that never work and the protests that follow them",
                  "A war that never starts: the long standoff in the region and its effect on trade",
                  "Auditors who report errors in the accounts of the bank and what follows",
                  "None of the parties and their promises on housing before the election",
                  # the news tells its events in the past tense
                  "Peace talks never started despite the ceasefire agreement signed in March",
                  "The witness never appeared in court during the trial of the former minister",
                  "Auditors reported errors in the accounts of the bank before its collapse",
                  "Climate talks stalled indefinitely after the walkout of the delegations",
                  "None of the polls showed a lead for either candidate before the vote",
                  "None of the nurses at work during the strike were paid overtime by the hospital"]:
        assert question_form(topic) == "topic", topic


def test_a_problem_labelled_entry_heads_the_solution_labelled_answer_below_it() -> None:
    from citesum.segment import segments

    # AWStats' FAQ: "PROBLEM:" states the asker's case, as "Q:" asks; "SOLUTION:" answers, as "A:" does. Before,
    # the problem was stated as the answer ("I don't want to see my own IP address in the stats ..."), and the
    # solution's line ran on from it as one paragraph, its label kept in the sentence
    faq = ("Frobstat FAQ\n\nFAQ-COM140 : HOW TO EXCLUDE MY IP ADDRESS\n"
           "PROBLEM: I don't want to see my own IP address in the stats or I want to exclude a whole subnet.\n"
           "SOLUTION: You must edit the config file to change the SkipHosts parameter.\n"
           "FAQ-COM150 : NO PICTURES SHOWN\n"
           "PROBLEM: Frobstat seems to work (all data and counters seem to be good) but I have no image shown.\n"
           "SOLUTION: With the Apache web server, a directory called icons is hidden by its own icons alias.\n")
    question = "How do I keep my own IP address out of the stats?"
    assert [b.text for b in ExtractiveSummarizer().summarize(question, _context(faq)).bullets] == [
        "You must edit the config file to change the SkipHosts parameter."]
    # the label leaves the answer's sentence, which starts on its line
    answer_line = faq.index("SOLUTION: You")
    assert any(faq[unit.start:unit.end].startswith("You must edit") for unit in segments(faq)
               if unit.start > answer_line)
    # "Fix:" opens a change log's entries: no label of an answer
    log = "Version 2.1\n\nThe parser was rewritten for speed.\nFix: The parser no longer crashes on empty files.\n"
    assert any(log[unit.start:unit.end].startswith("The parser was rewritten for speed. Fix: The")
               or log[unit.start:unit.end].startswith("Fix: The") for unit in segments(log))
    # the asker's case told after the problem is the asker's too, not the answer
    entry = faq.replace("a whole subnet.\n", "a whole subnet. I tried a firewall rule already.\n")
    assert [b.text for b in ExtractiveSummarizer().summarize(question, _context(entry)).bullets] == [
        "You must edit the config file to change the SkipHosts parameter."]
    # outside an entry that an answer's label ends, "Problem:" and "Symptom:" state facts, as release notes do;
    # and a question a manual asks itself, above a workaround, is no entry: its answer is stated
    notes = ("Known issues in 2.4\n\nProblem: The importer fails on files larger than 2 GB on 32-bit systems.\n\n"
             "The release also adds a dark theme and faster startup.\n")
    assert [b.text for b in ExtractiveSummarizer().summarize("Does the importer fail on large files?",
                                                            _context(notes)).bullets] == [
        "Problem: The importer fails on files larger than 2 GB on 32-bit systems."]
    manual = ("Cache growth\n\nWhy does the cache keep growing? The cache grows because its entries never expire by "
              "default.\n\nWorkaround: Set a TTL with the cache-ttl option in frob.conf.\n")
    assert ExtractiveSummarizer().summarize("Why does the cache keep growing?", _context(manual)).bullets[0].text == (
        "The cache grows because its entries never expire by default.")


TMUX_README = """Welcome to tmux!

tmux is a terminal multiplexer: it enables a number of terminals to be created,
accessed, and controlled from a single screen.

* Dependencies

tmux depends on libevent 2.x, available from:

\thttps://github.com/libevent/libevent/releases/latest

It also depends on ncurses, available from:

\thttps://invisible-mirror.net/archives/ncurses/
"""
NETTLE_MANUAL = """The libhogweed library contains those functions of Nettle that uses bignum operations, and
depends on the GMP library. If the involved libraries are installed as dynamic libraries, it may be sufficient
to link with just -lhogweed, and the loader will resolve the dependencies automatically.
"""


def test_a_listing_shown_under_its_sentence_is_whole_and_set_in_evenly() -> None:
    from citesum.chunking import chunk_passages
    from citesum.tokens import get_tokenizer
    from citesum.types import Document
    from fixtures import CLOCKD_README

    # as the index and the packer give it: the README cut into passages of 60 tokens, joined in one block
    document = Document(id="d1", title="Clock daemon for Debian", text=CLOCKD_README)
    passages = tuple(chunk_passages(document, get_tokenizer(), max_tokens=60))
    text = "\n".join(passage.text for passage in passages)
    context = Context((ContextBlock(1, "d1", document.title, text, 100, passages, 1.0),), "original", 10_000, 100)
    [shows] = [b for b in ExtractiveSummarizer().summarize("Which important files fill the /etc/clockd directory?",
                                                           context).bullets if b.code]
    assert shows.text == "It is filled by two important files:"
    # before: only the first file, its first line set in less than its second
    assert shows.code.splitlines() == ["-> clockd.conf (the daemon's settings, see clockd.conf(5)",
                                       "  for the directives)", "",
                                       "-> clockd.keys (the keys used to sign the packets, see",
                                       "  the keyfile directive)"], shows.code


def test_an_faq_labelled_q_and_a_is_answered_by_its_answers_not_by_its_askers() -> None:
    from citesum.chunking import chunk_passages
    from citesum.tokens import get_tokenizer
    from fixtures import MOUSE_FAQ

    # gpm's FAQ, as a new user asked it, in passages of 60 tokens joined in one block as the packer joins them
    passages = tuple(chunk_passages(Document(id="d1", title="Mouse FAQ", text=MOUSE_FAQ), get_tokenizer(), 60))
    text = "\n".join(passage.text for passage in passages)
    context = Context((ContextBlock(1, "d1", "Mouse FAQ", text, 100, passages, 1.0),), "original", 10_000, 100)
    summarizer = ExtractiveSummarizer()
    # the asker's words are not stated ("It works fine except that when I drag it with the middle button pressed,
    # ...", stated when a passage began inside the entry: the chunker's test shows that passage gone)
    dragging = [b.text for b in summarizer.summarize("dragging with the middle button stops working in the mouse "
                                                     "daemon", context).bullets]
    assert dragging and not any("It works fine" in t or "Dragging with the other" in t for t in dragging), dragging
    assert "Try using the extended protocol instead." in dragging
    # a question on the entry's second line goes with the question its first line opens: the answer's section
    # holds both (gpm's "Try \"-t mman\" instead." had been under "Is there any workaround?" alone)
    from citesum.summarize.extractive import _placed_sentences

    asked = ("Q: Why does the plain protocol paste twice?\n   Is there any workaround?\n\n"
             "A: Try the three-button protocol instead.\n")
    [(_, section, _, _)] = list(_placed_sentences(_context(asked).blocks[0], 3))
    assert section.split("\n")[1] == "Q: Why does the plain protocol paste twice? Is there any workaround?", section
    paste = [b.text for b in summarizer.summarize("I run the plain protocol and get a double paste when I press "
                                                  "the middle button", context).bullets]
    assert paste[:1] == ["Try the three-button protocol instead."], paste
    # an answer in lower case after its "A:" is quoted without the label
    conf = [b.text for b in summarizer.summarize("mouse.conf is not accepted, but the daemon works from the "
                                                 "command line", context).bullets]
    assert conf[:1] == ["mouse.conf is not read by the daemon itself."], conf


def test_a_broad_question_about_a_program_by_name_is_answered_by_what_names_it() -> None:
    # a new user's trial: "Which libraries does tmux depend on?" was answered with Nettle's dependencies
    context = _titled(("tmux-README", TMUX_README), ("Nettle: a low-level cryptographic library", NETTLE_MANUAL))
    question = "Which libraries does tmux depend on?"
    assert question_form(question) == "broad"
    summary = ExtractiveSummarizer().summarize(question, context)
    texts = [b.text for b in summary.bullets]
    assert not any("hogweed" in text or "GMP" in text for text in texts), texts
    # the sentence ending with a colon shows the address below it (a blank line between, indented by a tab)
    libevent = [b for b in summary.bullets if b.text.startswith("tmux depends on libevent 2.x")]
    assert libevent and libevent[0].code == "https://github.com/libevent/libevent/releases/latest"
    # a subject named in common words ("library") is no program's name: a broad question keeps those facts
    common = ExtractiveSummarizer().summarize("Which dependencies does a library have?", context)
    assert any("GMP" in b.text for b in common.bullets), [b.text for b in common.bullets]


def test_a_sentence_a_command_ends_is_stated_with_it() -> None:
    readme = ("Automatic Acoustic Management\n\nMost modern hard disks can trade speed for a quieter seek.\n\n"
              "To set the most quiet mode use\n\n\thdparm -M 128 /dev/hda\n\n"
              "For the fastest setting use\n\n\thdparm -M 254 /dev/hda\n\n"
              "Now test different values and try to hear the difference.\n")
    summary = ExtractiveSummarizer().summarize("How do I set my disk to the most quiet mode?",
                                               _titled(("hdparm README.acoustic", readme)))
    # before: the command was stated as a sentence of its own, under the line that asks for it as its heading
    assert summary.bullets and summary.bullets[0].text == "To set the most quiet mode use"
    assert summary.bullets[0].code == "hdparm -M 128 /dev/hda"
    assert not any(b.text.startswith("hdparm") for b in summary.bullets)
    # only a line the block below it ends, after a blank line and indented: a fresh-eyes review found a line
    # without a full stop above fenced code shown with that code
    fenced = ("frob\n\nThe package is released under the terms of the MIT license\n```\npip install frob\n```\n"
              "It runs on Linux and macOS.\n")
    licensed = ExtractiveSummarizer().summarize("Which license is frob released under?", _titled(("frob", fenced)))
    assert not any(b.code for b in licensed.bullets), [(b.text, b.code) for b in licensed.bullets]


def test_a_sentence_that_introduces_a_list_or_a_table_shows_it() -> None:
    from citesum.summarize.extractive import _placed_sentences, _statable_sentences

    # libxml2's FAQ (a new user's trial): the answer is the list its sentence introduces; before, a sentence
    # ending with a colon above a list was no whole sentence, and only "does not require any other library" came
    libs = ("Libxml2 does not require any other library.\n\nHowever if found at configuration time libxml2 will "
            "detect and use the following libs:\n\n- libz : a highly portable compression library.\n- iconv: a "
            "powerful character encoding conversion library.\n\nThe parser is written in C.\n")
    bullets = ExtractiveSummarizer().summarize("Which libraries does libxml2 use when it finds them?",
                                               _context(libs)).bullets
    [listing] = [b for b in bullets if b.text.endswith("the following libs:")]
    assert listing.code == ("- libz : a highly portable compression library.\n"
                            "- iconv: a powerful character encoding conversion library.")
    # Debian's reference manual: "Here is a summary of ..." above a table's caption and the table
    table = "\n".join(["| package | size | comment |", "|---|---|---|"]
                      + [f"| tool{n} | {n}0 | compression utility number {n} |" for n in range(14)])
    tools = ("Archive and compression tools\n\nHere is a summary of archive and compression tools available on the "
             f"Debian system.\n\nTable 10.1. List of archive and compression tools\n\n{table}\n")
    bullets = ExtractiveSummarizer().summarize("Which compression tools does Debian have?", _context(tools)).bullets
    [summary] = [b for b in bullets if b.text.startswith("Here is a summary")]
    lines = summary.code.splitlines()
    assert lines[:3] == ["| package | size | comment |", "|---|---|---|", "| tool0 | 00 | compression utility "
                         "number 0 |"] and lines[-1] == "…" and len(lines) == 13
    # a table the chunker cut goes on in the document's next passage, packed after it in the block
    cut = tools.index("| tool3 ")
    first, second = tools[:cut].rstrip("\n"), tools[cut:]
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 40), Passage("d1::1", "d1", 1, cut, len(tools),
                                                                              second, 60))
    block = ContextBlock(1, "d1", "D1", f"{first}\n{second}", 100, passages, 1.0)
    stated = {sentence: code for sentence, _, _, code in _placed_sentences(block, 3)}
    [shown] = [code for sentence, code in stated.items() if sentence.startswith("Here is a summary")]
    assert shown.splitlines()[2:6] == [f"| tool{n} | {n}0 | compression utility number {n} |" for n in range(4)]
    # a list after a full stop, or prose after a colon, is not shown
    assert all(b.code == "" for b in ExtractiveSummarizer().summarize(
        "Which libraries does libxml2 use when it finds them?", _context(libs.replace("libs:", "libs."))).bullets)
    assert not any(s.endswith(":") for s, _ in _statable_sentences(
        _context(libs.replace("- libz", "It uses libz").replace("- iconv", "And iconv")).blocks[0], 3))


def test_an_answer_on_its_labelled_line_is_no_premise_of_the_next_question() -> None:
    from citesum.summarize.extractive import _statable_sentences

    # MPlayer's FAQ, its entries on lines of their own in one paragraph: the answer after "A:" was read as the
    # asker's case of the question after it, never stated, and headed the next answer as its question
    faq = ("Q: There are error messages about file not found /usr/local/lib/codecs/ ...\n"
           "A: Download and install the binary codecs from our download page.\n"
           "Q: How can I make MPlayer remember the options I use for a particular file, e.g. movie.avi?\n"
           "A: Create a file named movie.avi.conf with the file-specific options in it and put it in ~/.mplayer.")
    stated = dict(_statable_sentences(_context(faq).blocks[0], 3))
    sections = {sentence: section.splitlines()[1] for sentence, section in stated.items()}
    assert sections["Download and install the binary codecs from our download page."] == (
        "Q: There are error messages about file not found /usr/local/lib/codecs/ ...")
    assert sections["Create a file named movie.avi.conf with the file-specific options in it and put it in "
                    "~/.mplayer."].startswith("Q: How can I make MPlayer remember")


def test_the_sentence_after_an_answer_that_shows_a_list_goes_on_from_it() -> None:
    # xinetd's FAQ (a new user's trial): the answer's reasons are the list the sentence after it introduces
    faq = ("Q: Why should I use xinetd?\nA: Because it is a lot better than the old inetd daemon.\n"
           "It can do access control on all services based on:\n\n- the address of the remote host\n"
           "- the time of access\n\nQ: Who wrote it?\nA: Panos Tsirigotis wrote the first version.\n")
    bullets = ExtractiveSummarizer().summarize("Why should I use xinetd?", _context(faq)).bullets
    assert [b.text for b in bullets][:2] == ["Because it is a lot better than the old inetd daemon.",
                                             "It can do access control on all services based on:"]
    assert bullets[1].code == "- the address of the remote host\n- the time of access"


def test_an_faq_answer_the_chunker_cut_keeps_its_question_in_the_next_passage() -> None:
    from citesum.summarize.extractive import _placed_sentences

    # xinetd's FAQ (a new user's trial): the fix, in the passage after the entry's first sentences, was stated
    # under no question and lost to "Some BSD's have a problem with this."
    first = ("Q. What's this setgroups(0, NULL) error?\nA. By default, xinetd does not allow group permissions to "
             "the server processes.\nSome BSD's have a problem with this.")
    second = "To avoid this error, put the directive groups = yes into your services.\nQ. Who wrote xinetd?"
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 30),
                Passage("d1::1", "d1", 1, len(first) + 1, len(first) + 1 + len(second), second, 15))
    for title, carried in (("xinetd FAQ", True), ("xinetd manual", False)):
        block = ContextBlock(1, "d1", title, f"{first}\n{second}", 45, passages, 1.0)
        sections = {sentence: section for sentence, section, _, _ in _placed_sentences(block, 3)}
        fix = sections["To avoid this error, put the directive groups = yes into your services."]
        # (outside an FAQ, a question in the text heads no passage after its own)
        assert ("What's this setgroups(0, NULL) error?" in fix) is carried, (title, fix)


def test_a_question_asking_what_a_thing_is_is_answered_by_a_sentence_that_says_what_it_is() -> None:
    # D-Bus's FAQ (a new user's trial): "What is D-Bus?" got "The best place to start is to read the D-Bus
    # tutorial, so you have a concrete idea what D-Bus actually is." and no definition
    faq = ("How does D-Bus differ from other protocols?\n\nThe best place to start is to read the D-Bus tutorial, so "
           "you have a concrete idea what D-Bus actually is. D-Bus was designed for desktop sessions. CORBA is "
           "designed to support object-oriented IPC between objects.\n\nWhich IPC mechanism should I use?\n\nIf "
           "you are writing an Internet application, XML-RPC or SOAP work for many people. D-Bus is an IPC system "
           "with a bus daemon and some higher-level structure. The low-level library is considered ABI stable.\n")
    summary = ExtractiveSummarizer().summarize("What is D-Bus?", _context(faq))
    assert [b.text for b in summary.bullets][:1] == [
        "D-Bus is an IPC system with a bus daemon and some higher-level structure."]
    from citesum.summarize.extractive import definition_of

    assert definition_of("What are hard links?") and definition_of("1. What is D-Bus?")
    for question in ("What is the usual cause?", "What is going on?", "What is happening with the water supply?",
                     "What are my options?", "How does D-Bus work?"):
        assert definition_of(question) is None, question


def test_what_a_sentence_shows_and_defines_is_read_narrowly() -> None:
    from citesum.segment import segments
    from citesum.summarize.extractive import definition_of, introduced_code

    # a fresh-eyes review's cases: "here is" within a sentence points at nothing
    text = "The problem here is that the default is wrong.\n\n```\nport = 8080\n```\n"
    units = segments(text)
    assert introduced_code(text[units[0].start:units[0].end], text, units, 0) == ""
    # a numbered list keeps its numbers
    steps = "To install it, do this:\n\n1. Download the tarball.\n2. Run make install.\n"
    units = segments(steps)
    assert introduced_code(steps[units[0].start:units[0].end], steps, units, 0) == (
        "1. Download the tarball.\n2. Run make install.")
    # a list that a passage ends in goes on in the document's next passage
    assert introduced_code(steps[units[0].start:units[0].end], steps, units, 0, going_on="3. Test it.\n") == (
        "1. Download the tarball.\n2. Run make install.\n3. Test it.")
    # a value is no definition; a plural is defined without an article, a singular with one
    assert definition_of("What is the default port?") is None and definition_of("What is D-Bus used for?") is None
    hard_links = definition_of("What are hard links?")
    assert hard_links.search("Hard links are directory entries that name an inode.")
    assert hard_links.search("A hard link is a directory entry.")
    assert not hard_links.search("Hard links are not allowed on directories.")
    assert definition_of("What's D-Bus?").search("D-Bus is an IPC system.")


def test_a_table_going_on_in_later_passages_shows_only_whole_rows() -> None:
    from citesum.summarize.extractive import _placed_sentences

    # the passages after are looked at up to a limit: a row the limit cuts is left out, not shown cut short
    rows = [f"| tool{n} | {'x' * 240} |" for n in range(20)]
    first = "Here is a summary of the tools available on the system.\n\n| package | comment |\n|---|---|"
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 20),
                *(Passage(f"d1::{n}", "d1", n, 0, len(row), row, 40) for n, row in enumerate(rows, start=1)))
    block = ContextBlock(1, "d1", "D1", "\n".join([first, *rows]), 900, passages, 1.0)
    [shown] = [code for sentence, _, _, code in _placed_sentences(block, 3) if sentence.startswith("Here is")]
    lines = shown.splitlines()
    # (each row is longer than a shown line: it ends with "…"; the row the limit cut, shorter, did not)
    assert lines[2].startswith("| tool0 ") and all(line.endswith(("|", "…")) for line in lines), lines


def test_a_sentence_introducing_code_the_next_passage_opens_with_is_stated_with_it() -> None:
    """xmltodict's README: the chunker put the sentence that introduces the streaming example in a passage, and
    the example, which did not fit beside it, in the next. Ending with a colon and showing nothing, the sentence
    was never stated, and the question it answers was turned away."""
    from citesum.summarize.extractive import _placed_sentences

    first = ("Streaming mode\n\nxmltodict is very fast (Expat-based) and has a streaming mode with a small memory "
             "footprint, suitable for big XML dumps like Discogs or Wikipedia:")
    code = ("```\n>>> def handle_artist(_, artist):\n...     print(artist['name'])\n...     return True\n"
            ">>> xmltodict.parse(GzipFile('discogs_artists.xml.gz'),\n...     item_depth=2, item_callback=handle_artist)"
            "\n```")
    later = "It can also be used from the command line to pipe objects to a script."
    passages = (Passage("d1::0", "d1", 0, 0, len(first), first, 30), Passage("d1::1", "d1", 1, 0, len(code), code, 80),
                Passage("d1::5", "d1", 5, 0, len(later), later, 15))
    block = ContextBlock(1, "d1", "xmltodict", "\n".join([first, code, later]), 125, passages, 1.0)
    placed = {sentence: shown for sentence, _, _, shown in _placed_sentences(block, 3)}
    [introducer] = [sentence for sentence in placed if sentence.startswith("xmltodict is very fast")]
    assert placed[introducer].startswith(">>> def handle_artist(_, artist):"), placed
    # a next passage that opens with prose shows nothing the sentence introduces, though code comes after it
    prose = "Here is how it works in detail with the file given below.\n\n```\nx = 1\n```"
    going_on = (passages[0], Passage("d1::1", "d1", 1, 0, len(prose), prose, 25))
    block = ContextBlock(1, "d1", "xmltodict", "\n".join([first, prose]), 55, going_on, 1.0)
    assert not any(sentence.startswith("xmltodict is very fast") for sentence, *_ in _placed_sentences(block, 3))
    # a passage that is not the document's next shows nothing the sentence introduces: it is not stated
    apart = (passages[0], passages[2])
    block = ContextBlock(1, "d1", "xmltodict", "\n".join([first, later]), 45, apart, 1.0)
    assert not any(sentence.startswith("xmltodict is very fast") for sentence, *_ in _placed_sentences(block, 3))


TABULATE = """Wide fullwidth characters
=========================

To properly align tables which contain wide characters (typically fullwidth glyphs
from Chinese, Japanese or Korean languages), the user should install wcwidth library.
To install it together with tabulate, run the install command with the widechars extra.

By default, tabulate removes leading and trailing whitespace from text columns.
"""


def test_a_participle_or_adverb_no_document_uses_tells_the_case_and_names_no_subject() -> None:
    # the asker's words for how things look ("misaligned", "wrecked") are not what the documents must name
    terms = _terms({"japanes": 2, "column": 6, "tabul": 9, "text": 8, "align": 3, "fix": 1, "past": 2, "code": 9,
                    "indent": 4, "come": 2, "output": 5, "keep": 3, "support": 4, "run": 5, "again": 2, "job": 3})
    assert missing_subjects("Why are my Japanese columns misaligned in tabulate?", terms) == []
    assert missing_subjects("Why does pasted code come out wrecked, and apparently indented?", terms) == []
    # a gerund tells what goes on after "be" or "keep", "without" or "from"; after "support", it names a feature
    assert missing_subjects("Can I run the jobs again without redoing the finished ones?", terms) == []
    assert missing_subjects("Does tabulate support sharding?", terms) == ["sharding"]
    assert missing_subjects("Why is my tabulate output stuttering?", terms) == []
    assert missing_subjects("Is there support for sharding in tabulate?", terms) == ["sharding"]
    # a name still is ("XLSX"), and so is an uncommon noun ("parquet"); not the plural of a common one
    assert missing_subjects("Can tabulate read an XLSX file?", terms) == ["XLSX"]
    assert missing_subjects("Can tabulate output to parquet?", terms) == ["parquet"]
    assert missing_subjects("Can tabulate output to spreadsheets?", terms) == []
    terms = _terms({"japanes": 2, "column": 6, "tabul": 9, "text": 8, "align": 3, "output": 5, "wide": 2,
                    "charact": 3, "instal": 4})
    summary = ExtractiveSummarizer().summarize("What should I install when tabulate columns with wide Japanese "
                                               "characters come out misaligned?", _context(TABULATE, terms=terms))
    assert [b.text for b in summary.bullets][:1] == [
        "To properly align tables which contain wide characters (typically fullwidth glyphs from Chinese, Japanese "
        "or Korean languages), the user should install wcwidth library."], summary.notes


OPENVPN_README = """Running OpenVPN as an unprivileged user
=======================================

If you use the mlock option in your configuration, you might run into issues
with openvpn complaining about out of memory. The reason for this behavior is
that openvpn uses mlockall to pin all of its pages into memory, and the default
limit of locked memory for an unprivileged user is small. To fix this, raise
LimitMEMLOCK in the service's unit file.

The init script starts one daemon for each configuration file in /etc/openvpn.
"""
TKINTER_FAQ = """Why doesn't my key binding work?
================================

An often-heard complaint is that event handlers bound to events with the bind()
method don't get handled even when the appropriate key is pressed. The most
common cause is that the widget to which the binding applies doesn't have
keyboard focus. Check out the Tk documentation for the focus command.
"""


def test_a_sentence_naming_the_cause_of_the_one_before_is_matched_with_its_words() -> None:
    # the sentence before restates the asker's trouble; the one after names its cause in words of its own
    summary = ExtractiveSummarizer().summarize("Why does openvpn keep complaining that it is out of memory?",
                                               _context(OPENVPN_README))
    # (each bullet opens with the trouble its "this" refers back to)
    trouble = "If you use the mlock option in your configuration, you might run into issues with openvpn"
    assert [b.text for b in summary.bullets] == [
        f"{trouble} complaining about out of memory. The reason for this behavior is that openvpn uses mlockall to pin "
        "all of its pages into memory, and the default limit of locked memory for an unprivileged user is small."]
    # asked what to do, the remedy answers (the cause before it gives it no score of its own)
    summary = ExtractiveSummarizer().summarize("How do I stop openvpn complaining that it is out of memory?",
                                               _context(OPENVPN_README))
    assert summary.bullets and summary.bullets[0].text.startswith(trouble), summary.bullets
    assert summary.bullets[0].text.endswith("To fix this, raise LimitMEMLOCK in the service's unit file.")
    summary = ExtractiveSummarizer().summarize("Why are my key bindings not handled when I press the key?",
                                               _context(TKINTER_FAQ))
    assert summary.bullets and summary.bullets[0].text.endswith(
        "The most common cause is that the widget to which the binding applies doesn't have keyboard focus."), \
        summary.bullets


def test_a_definition_lists_term_heads_its_description_until_the_list_ends() -> None:
    from citesum.summarize.extractive import _placed_sentences

    text = ("Output States\n\nruntest flags the outcome of each test as one of these cases.\n"
            "- PASS\n- The most desirable outcome: the test was expected to succeed and did succeed.\n- XFAIL\n"
            "- A test failed, but it was expected to fail.\n\nThe summary counts each outcome at the end of "
            "the run.\n")
    block = _context(text).blocks[0]
    sections = {sentence: section.split("\n")[1] for sentence, section, _, _ in _placed_sentences(block, 3)}
    assert sections["A test failed, but it was expected to fail."] == "Output States XFAIL"
    assert sections["The summary counts each outcome at the end of the run."] == "Output States"
    # a sentence of the description that says nothing a reader asked for does not end the list
    text = text.replace("expected to fail.\n", "expected to fail. See the log for details.\n- The run still "
                        "counts it as a success.\n")
    sections = {sentence: section.split("\n")[1] for sentence, section, _, _ in
                _placed_sentences(_context(text).blocks[0], 3)}
    assert sections["The run still counts it as a success."] == "Output States XFAIL", sections


def test_the_asker_naming_themselves_names_nothing_the_documents_lack() -> None:
    # a new user's trial: "no document mentions 'myself'" for a firewall question its manual does not answer
    summary = ExtractiveSummarizer().summarize("How do I test a new zlib build without locking myself out?",
                                               _context(MANUAL, ZLIB, FAQ, terms=_terms({"zlib": 9, "test": 4})))
    assert summary.abstained and not any("myself" in note for note in summary.notes), summary.notes


def test_an_abstention_names_only_the_missing_words_of_the_clause_that_asks() -> None:
    # the twenty-ninth split: "no document mentions 'painfully'", as if that were why nothing answered
    terms = _terms({"point": 4, "float": 2, "arithmet": 2, "bash": 30, "thread": 5, "safe": 5})
    told = ExtractiveSummarizer().summarize("My shell is painfully slow. What is the boiling point of mercury?",
                                            _context(SHELL_README, MANUAL, terms=terms))
    assert told.abstained and "no document mentions 'boiling', 'mercury'" in told.notes[0], told.notes
    assert "painfully" not in told.notes[0]


def test_the_rest_of_a_sentence_that_code_interrupted_is_no_sentence() -> None:
    from citesum.summarize.extractive import _placed_sentences

    # git-buildpackage's manual closes its paragraph around the command and opens another after it
    # (as the page's text gives it: the command's line runs into the paragraph after it)
    text = ("The created branch will be named after the branch you imported from. So if you do your Debian\n"
            "packaging on debian/sid and do a\n  \n    gbp pq import\n    then the newly created branch will be\n"
            "    called patch-queue/debian/sid.\n\nInstallation\n\nlibgbp is installed with the package.\n")
    stated = [" ".join(sentence.split()) for sentence, _, _, _ in _placed_sentences(_context(text).blocks[0], 3)]
    assert stated[0] == "The created branch will be named after the branch you imported from."
    assert not any("newly created" in sentence for sentence in stated), stated
    # a sentence in lower case under a heading is one, and so is a paragraph of its own after code, or one
    # after a list's item
    assert stated[-1] == "libgbp is installed with the package."
    text = ("To check the version on your system you can run\n\n```\ngpg --version\n```\n\ngpg prints its "
            "version and exits, then it checks the keyring.\n\n- The prefix to install to\n\nlibfoo is the core "
            "library and it is always built.\n")
    stated = [" ".join(sentence.split()) for sentence, _, _, _ in _placed_sentences(_context(text).blocks[0], 3)]
    assert "gpg prints its version and exits, then it checks the keyring." in stated, stated
    assert "libfoo is the core library and it is always built." in stated, stated


def test_the_rest_of_a_sentence_longer_than_a_passage_is_not_stated_as_one(tmp_path: Path) -> None:
    from citesum import Index, Pipeline

    # a new user's trial (squid's README.Debian, hard-wrapped): "If I purge the squid package, will it delete my
    # cache and logs?" was answered "this way you won't loose the logs when you purge squid.", the last piece of a
    # 389-character sentence that the chunker cut at its commas into passages of 100 tokens
    readme = ("Proxy for Debian\n================\n\n"
              "Both flavours of the proxy share not only the config files but also the log\n"
              "files and the cache. When purging the proxy, the package did not remove the\n"
              "cache files, typically at /var/spool/proxy, and now, since version 4.13-6, it\n"
              "also does not remove the logs at /var/log/proxy, this means that if you want\n"
              "to migrate to the other flavour and, afterwards, purge the proxy, you must\n"
              "make sure you have at least version 4.13-6 of the proxy installed, this way you\n"
              "will not lose the logs when you purge the proxy package from your system. So, if\n"
              "you have version 4.13-6 or later, you can switch flavours without any problem.\n")
    index = Index.create(tmp_path / "ix")
    index.add([Document("README.Debian", "Proxy for Debian", readme),
               *[Document(f"note{n}.txt", f"Note {n}", f"Note {n} says how the build of part {n} is laid out.")
                 for n in range(20)]])
    summary = Pipeline(index).summarize("If I purge the proxy package, will it delete my logs?")
    stated = [b.text for b in (*summary.bullets, *summary.leads)]
    assert stated and not any(text.startswith("this way") for text in stated), stated
    assert [p.continues for p in index.passages if p.document_id == "README.Debian" and p.text.startswith("this way")
            ] == [True]


RSYNC_NEWS = """NEWS for rsync 3.5.0 (13 Aug 2026)

This release fixes 33 security issues found during an audit of the path handling and the daemon protocol.

The --info=progress2 output is now updated once a second.

NEWS for rsync 2.6.6 (28 Jul 2005)

A security problem in the bundled zlib 1.1.4 was fixed by upgrading it to 1.2.3.

The --delete option is faster on large trees.
"""


def test_a_release_named_by_the_documents_title_is_not_the_release_of_a_section_that_names_its_own() -> None:
    # a new user's trial: rsync's NEWS.md is titled by its first heading, the newest release; a sentence under an
    # old release's heading carried that title in its section, and answered for the newest release
    context = _titled(("NEWS for rsync 3.5.0 (13 Aug 2026)", RSYNC_NEWS))
    newest = ExtractiveSummarizer().summarize("What security problems were fixed in rsync 3.5.0?", context)
    assert [b.text for b in newest.bullets] == ["This release fixes 33 security issues found during an audit of the "
                                                "path handling and the daemon protocol."]
    older = ExtractiveSummarizer().summarize("Which security problem was fixed in rsync 2.6.6?", context)
    assert [b.text for b in older.bullets] == ["A security problem in the bundled zlib 1.1.4 was fixed by upgrading "
                                               "it to 1.2.3."]
    # a heading that names a release of another thing keeps its document's release
    from citesum.summarize.extractive import _release_place, _Sentence

    curl = _Sentence("The TLS backend can now load providers.", 1, "d1", frozenset(), None,
                     section="Release notes for curl 8.1.0\nSupport for OpenSSL 3.0")
    assert "8.1.0" in _release_place(curl)
    news = dataclasses.replace(curl, section="NEWS for rsync 3.5.0\nNEWS for rsync 2.6.6 (28 Jul 2005)")
    assert "3.5.0" not in _release_place(news) and "2.6.6" in _release_place(news)


def test_a_release_the_question_names_is_answered_under_it_and_one_no_passage_writes_is_not() -> None:
    # a new user's trial and two seen realdocs questions: "Can I still use the current requests release on Python
    # 2.7?" stated what the release notes said of another Python; the word analyser drops "2.7" and "1.2.2"
    news = ("Release 2.4.0 fixes the crash when the download cache is full and the mirror list is long.\n\n"
            "Release 2.3.1 fixes the crash when the download queue is full and the mirror list is empty.\n\n"
            "Release 2.3.0 adds resumable downloads to the command line client.")
    summary = ExtractiveSummarizer().summarize("Which crash does release 2.3.1 fix?", _context(news))
    assert [b.text for b in summary.bullets][:1] == ["Release 2.3.1 fixes the crash when the download queue is full "
                                                     "and the mirror list is empty."]
    unknown = ExtractiveSummarizer().summarize("Which crash does release 9.1.4 fix?", _context(news))
    assert unknown.abstained and "no document mentions '9.1.4'" in unknown.notes[0]
    assert [b.text for b in unknown.leads][:1]  # the closest passages stay as leads
    from citesum.summarize.extractive import asked_versions

    # what a version is: three parts, or two after "v", "version", "release" or a name; not a measure, a date or
    # an address
    assert asked_versions("What changed in NTPsec 1.2.2? And in v0.9.7?") == ["1.2.2", "0.9.7"]
    assert asked_versions("Since we moved to Slurm 20.11, does version 2.0 still work?") == ["20.11", "2.0"]
    assert asked_versions("Can it resample 48 kHz to 44.1 kHz, at 1.5 GB a file, from 192.168.1.1 on "
                          "2022-12-28?") == []


def test_a_setting_a_reference_entry_heads_is_not_answered_by_other_entries_that_name_it() -> None:
    # a new user's trial (zsh's manual as a PDF): "What does the AUTO_CD option do in zsh?" stated CDABLE_VARS'
    # description ("If the argument to a cd command (or an implied cd with the AUTO_CD option set) is not a
    # directory, ..."), which does not name the option it describes, so it read as AUTO_CD's
    reference = ("16.2 Options\n\nAUTO_SYNC (-S)\n\nIf a file changes in the watched folder, it is copied to the mirror "
                 "at once.\n\nKEEP_MIRROR\n\nNever delete a file from the mirror when the AUTO_SYNC option is set and "
                 "the file is deleted.\n\nMIRROR_ONLY (-M)\n\nThe mirror is written to by hand only (with the "
                 "AUTO_SYNC option set, the option is ignored).\n\nHISTORY_SIZE\n\nThe number of past copies of each "
                 "file that the history keeps before the oldest is dropped.\n\nQUIET_LOG\n\nDo not write a line to the "
                 "log for each file that is copied without an error.\n\nSLOW_LINK (-L)\n\nCompress each file before "
                 "it is sent over a network link to a remote mirror.\n")
    terms = _terms({"auto_sync": 3, "option": 30, "mirror": 20})
    summary = ExtractiveSummarizer().summarize("What does the AUTO_SYNC option do?", _context(reference, terms=terms))
    stated = [b.text for b in (*summary.bullets, *summary.leads)]
    assert stated[0] == "If a file changes in the watched folder, it is copied to the mirror at once.", stated
    assert not any("AUTO_SYNC" in b.text for b in summary.bullets)
    # a question that names no entry's setting is scored as before: the entries that name it answer
    named = ExtractiveSummarizer().summarize("What happens to deleted files with the AUTO_SYNC option set?",
                                             _context(reference.replace("AUTO_SYNC (-S)", "Syncing"), terms=terms))
    assert named.bullets and "AUTO_SYNC" in named.bullets[0].text


def test_the_rest_of_a_long_faq_question_still_heads_its_answer() -> None:
    from citesum.chunking import chunk_passages
    from citesum.tokens import get_tokenizer

    # a review: the rest of a question the chunker cut was left out of the heading its answer is found by, and
    # the question was turned away
    faq = ("Frequently Asked Questions\n\n"
           "Q: I run the proxy on a small machine with a slow disk, and I switched to the other flavour last week, "
           "after reading the notes, so if I purge the old squid package now, will it delete my cache and logs?\n\n"
           "A: No. The package keeps them when it is purged since version 4.13-6.\n\n"
           "Q: Can I run both flavours at once?\n\nA: Yes, each flavour listens on its own port and uses its own user.\n")
    passages = tuple(chunk_passages(Document("FAQ", "Proxy FAQ", faq), get_tokenizer(), max_tokens=30))
    assert any(p.continues for p in passages)
    block = ContextBlock(1, "FAQ", "Proxy FAQ", "\n".join(p.text for p in passages), 0, passages, 1.0)
    summary = ExtractiveSummarizer().summarize("Will purging the squid package delete my cache and logs?",
                                               Context((block,), "original", 10_000, 100))
    assert [b.text for b in summary.bullets] == ["No. The package keeps them when it is purged since version 4.13-6."]


def test_what_is_a_version_and_where_it_is_written() -> None:
    from citesum.summarize.extractive import asked_versions, unwritten_versions

    # a review: measures, dates, a document's parts and a number after a sentence's first word are no versions;
    # a version of two parts is written by its point releases; release notes may name theirs in their title only
    assert [asked_versions(q) for q in ["Is 1.5 GB of RAM enough?", "With 1.5 GB of RAM, can I index it?",
                                         "What happened on 15.01.2023?", "What does section 4.2.1 say?",
                                         "What does Table 3.1 show?", "Is 1.2 better?"]] == [[]] * 6
    assert asked_versions("Is Python 3.12 supported?") == ["3.12"]
    assert unwritten_versions("What is the default in Slurm 20.11?", ["Changes in Slurm 20.11.0"]) == []
    assert unwritten_versions("Is 1.2.2 out?", ["Changes in 1.2.20 and 11.2.2"]) == ["1.2.2"]
    notes = "Release notes for 3.4.1"
    summary = ExtractiveSummarizer().summarize("Which crash does release 3.4.1 fix?", Context((ContextBlock(
        1, "notes", notes, "The crash when the download queue is full is fixed.", 12), ), "original", 10_000, 100))
    assert not summary.abstained and [b.text for b in summary.bullets] == [
        "The crash when the download queue is full is fixed."]


def test_a_contraction_leaves_no_absent_word() -> None:
    from citesum.summarize.extractive import absent_words

    terms = _terms({"monit": 5, "restart": 4, "daemon": 3, "simpli": 1, "finish": 2, "start": 9, "yet": 1,
                    "give": 2, "time": 6, "ffmpeg": 4, "stream": 3, "show": 2, "more": 7})
    question = "At boot monit restarts a daemon that simply hasn't finished starting yet. How do I give it more time?"
    # before: "no document mentions 'boot', 'hasn'", what the apostrophe left of "hasn't"
    assert absent_words(question, terms) == ["boot"]
    assert absent_words("Why doesn't ffmpeg's list show the streams we've got?", terms) == ["list", "got"]
    assert absent_words("AT BOOT MONIT RESTARTS A DAEMON THAT SIMPLY HASN'T FINISHED.", terms) == ["BOOT"]


#: tcsh's FAQ, as a web page rendered to text: its entries are set in two spaces, their answers three
TCSH_FAQ = """FAQ

   For the people who do not read the manual!

  Where can I get csh sources?

   Csh sources are now available with the 4.4BSD networking distributions.
   You don't need csh sources to compile tcsh-6.0x.

  I compiled tcsh using gcc, and when I start up it says: tcsh: Warning no
  access to tty (Invalid Argument). Thus no job control in this shell

   Your <sys/ioctl.h> file is not ansi compliant. You have one of 3
   choices:
     * Run fixincludes from the gcc distribution.
     * Add -traditional to the gcc flags.
     * Compile with cc.

  I start tcsh and it takes a couple of minutes to get the prompt.

   You have defined REMOTEHOST and your DNS is not responding. Either
   undefine REMOTEHOST and recompile or fix your DNS.

  If you need help generating your .cshrc file, check out:

     * https://github.com/tcsh-org/tcsh/blob/master/dot.tcshrc
     * https://github.com/tcsh-org/tcsh/blob/master/dot.login
"""


CURL_FAQ_ENTRY = """  4.7 How do I keep user names and passwords secret in curl command lines?

  This problem has two sides:

  The first part is to avoid having clear-text passwords in the command line
  so that they do not appear in 'ps' outputs and similar. That is easily
  avoided by using the "-K" option to tell curl to read parameters from a file
  or stdin to which you can pass the secret info.
"""


def _passages_of(title: str, text: str, cuts: list[str], also: str = "") -> Context:
    """One block of ``text`` in passages cut where each of ``cuts`` starts, each passage stripped at its ends as
    the chunker leaves it, in a collection that holds its words and those of ``also``."""
    starts = [0, *(text.index(cut) for cut in cuts)]
    passages = tuple(Passage(f"d1::{n}", "d1", n, start, end, text[start:end].strip(), len(text[start:end].split()))
                     for n, (start, end) in enumerate(zip(starts, [*starts[1:], len(text)])))
    block = ContextBlock(1, "d1", title, text, len(text.split()), passages, 1.0)
    held = Counter(tokenize([text, also])[0] + tokenize([text, also])[1])
    return Context((block,), "original", 10_000, 100, _terms(dict(held)))


def test_an_faqs_entry_set_in_as_its_questions_are_heads_its_answer() -> None:
    from citesum.segment import segments
    from citesum.summarize.extractive import _statable_sentences, entry_indents

    assert entry_indents([(TCSH_FAQ, segments(TCSH_FAQ))]) == {2}
    # the passages open with an entry whose first line the chunker stripped, and with the answer of the one before
    question = "tcsh takes a couple of minutes before the prompt shows up"
    context = _passages_of("FAQ", TCSH_FAQ, ["I compiled tcsh", "Your <sys/ioctl.h>"], also=question)
    stated = dict(_statable_sentences(context.blocks[0], 3))
    # before: "I start tcsh and it takes a couple of minutes to get the prompt." and the gcc entry were facts to state
    assert not any(sentence.startswith("I ") for sentence in stated)
    assert stated["You have defined REMOTEHOST and your DNS is not responding."].split("\n")[1] == (
        "I start tcsh and it takes a couple of minutes to get the prompt.")
    # a statement set in as an answer, over a list set in deeper, is no entry
    assert "Your <sys/ioctl.h> file is not ansi compliant." in stated
    # nor is a passage's opening line alone, which the chunker stripped of how far it was set in (curl's FAQ sets
    # its entries and their answers in alike)
    curl = _passages_of("FAQ", CURL_FAQ_ENTRY, ["This problem has two sides:"])
    assert entry_indents([(p.text, segments(p.text)) for p in curl.blocks[0].passages]) == set()
    sections = [section for sentence, section in _statable_sentences(curl.blocks[0], 3)
                if sentence.startswith("The first part")]
    # before this rule knew the line alone: "4.7 How do I ...? This problem has two sides:" headed the answer
    assert [section.split("\n")[1] for section in sections] == [
        "4.7 How do I keep user names and passwords secret in curl command lines?"]
    # nor a statement above code set in, in an FAQ whose question stands over code set in (the review's find: its
    # questions at the margin over "    pip install foo" made every statement over code an entry, never stated)
    foo = """Foo FAQ

How do I install foo?

    pip install foo

Foo keeps its settings in the file ~/.foorc, which it reads at start.

    [core]
    colour = auto
"""
    assert entry_indents([(foo, segments(foo))]) == set()
    assert "Foo keeps its settings in the file ~/.foorc, which it reads at start." in dict(
        _statable_sentences(_passages_of("Foo FAQ", foo, []).blocks[0], 3))
    # nor is one in a document that is no FAQ
    assert any(sentence.startswith("I start") for sentence in
               dict(_statable_sentences(_passages_of("tcsh notes", TCSH_FAQ, []).blocks[0], 3)))
    # the asker's trouble told as the entry tells it is answered first by the entry's answer (here, with so few
    # sentences to weigh it against, as the first lead), not by the entry
    assert question_form(question) == "specific"  # (what takes long, told in the present tense, goes wrong)
    assert question_form("The merger took several months to close after the regulators' review") == "topic"
    summary = ExtractiveSummarizer().summarize(question, context)
    assert [b.text for b in summary.bullets or summary.leads][:2] == [
        "Either undefine REMOTEHOST and recompile or fix your DNS.",
        "You have defined REMOTEHOST and your DNS is not responding."]


def test_a_word_written_with_accents_is_the_word_the_documents_write_without() -> None:
    from citesum.summarize.extractive import absent_words, spelled_as_held

    terms = _terms({"naiv": 3, "configur": 5, "chroni": 4, "cafe": 2})
    question = "Where is the café's naïve configuration for chrony?"
    # a new user's trial: "(no document mentions 'naïve')", over a FAQ that says "naive"
    assert absent_words(question, terms) == []
    assert spelled_as_held(question, terms) == "Where is the cafe's naive configuration for chrony?"
    assert spelled_as_held(question, _terms({"naïv": 3, "configur": 5, "chroni": 4, "café": 2})) == question


def test_a_lead_says_where_its_sentence_is_and_on_which_printed_page() -> None:
    from citesum.ingest.pdf import PAGE_STARTS
    from citesum.responses import lead_response
    from citesum.types import Bullet

    text = ("Siege of Vicksburg\n\nThe river was high that spring.\n\fThe Union army dug\ntrenches around the city "
            "in May.\n")
    book = Document("siege.pdf", "Siege", text, format="pdf", metadata={PAGE_STARTS: [0, text.index("\f") + 1]})
    lead = Bullet("The Union army dug trenches around the city in May.", ("siege.pdf",), (1,))
    # before: a lead named its document only, and the page opened its text, not the page it is printed on
    [place] = lead_response(lead, {"siege.pdf": book})["places"]
    assert text[place["char_start"]:place["char_end"]] == "The Union army dug\ntrenches around the city in May."
    assert place["page"] == 2 and place["number"] == 1
    assert lead_response(lead, {})["places"] == []  # a document the answer does not hold: no place
    cache = Document("c.txt", "Cache", "Set the cachesize option. Set the cache.")
    [place] = lead_response(Bullet("Set the cache.", ("c.txt",), (1,)), {"c.txt": cache})["places"]
    assert place["char_start"] == cache.text.index("Set the cache.")  # a whole sentence, not part of a word


MYTOOL_README = """mytool
======

Usage
-----

Run mytool with two paths. It will report each file it copies. It is recommended to run it as the owner of the
files. mytool never follows symbolic links.

Notes
-----

- Copies are checked with SHA-256.
- It keeps the files' permissions.
"""


def test_a_bullet_that_refers_back_opens_with_the_sentence_it_refers_to() -> None:
    """A new user's trial: "- It will report each file it copies. [1]" told nothing of what "it" is."""
    def bullets(question: str) -> list[str]:
        return [b.text for b in ExtractiveSummarizer().summarize(question, _context(MYTOOL_README)).bullets]

    assert bullets("What does mytool report?")[0] == \
        "Run mytool with two paths. It will report each file it copies."
    # an "it" that names nothing: the sentence alone
    assert "It is recommended to run it as the owner of the files." in bullets(
        "Who should run mytool, as which user of the files?")
    # a list's items are not one text: the item alone, as written
    assert "It keeps the files' permissions." in bullets("Does mytool keep the permissions of the files?")
    # a sentence said once: the bullet that opens with it, not a bullet of its own as well
    said = bullets("How do I run mytool, and what will it report?")
    assert sum("Run mytool with two paths." in text for text in said) == 1, said
    # a lead, when nothing answers, too
    turned_away = ExtractiveSummarizer().summarize("Will mytool report compression ratios and network speeds?",
                                                   _context(MYTOOL_README))
    assert turned_away.abstained and turned_away.leads[0].text == \
        "Run mytool with two paths. It will report each file it copies."
    # the context joins two passages at a line break: a sentence opening the second is stated with the last of
    # the first when their document writes only whitespace between them, and alone when it writes more (a list's
    # marker, in apt-cacher-ng's PDF)
    def first_bullet(between: str) -> str:
        before = "Access control\n\nTherefore, mytool refuses a host it does not know."
        after = "This restriction also applies to hosts named by their address."
        document = f"{before}{between}{after}"
        passages = (Passage("d1::0", "d1", 0, 0, len(before), before, 12),
                    Passage("d1::1", "d1", 1, len(before) + len(between), len(document), after, 10))
        block = ContextBlock(1, "d1", "D1", "\n".join(p.text for p in passages), 22, passages, 1.0)
        answer = ExtractiveSummarizer().summarize("Does the mytool restriction apply to hosts named by their "
                                                  "address?", Context((block,), "original", 10_000, 100, None))
        return answer.bullets[0].text

    assert first_bullet("\n\n• ") == "This restriction also applies to hosts named by their address."
    assert first_bullet("\n\n") == ("Therefore, mytool refuses a host it does not know. This restriction also "
                                     "applies to hosts named by their address.")


def test_a_plain_text_heading_is_its_words_without_its_underline() -> None:
    from citesum.summarize.extractive import _placed_sentences, entry_question

    text = ("Usage\n-----\n\nRun mytool with two paths.\n\n"
            "How do I copy to a remote host?\n===============================\n\n"
            "Give the host before a colon, as scp does.\n")
    block = _context(text).blocks[0]
    sections = [section for _, section, _, _ in _placed_sentences(block, 3)]
    assert [section.split("\n")[1] for section in sections] == ["Usage", "How do I copy to a remote host?"]
    # before, the heading ended with its underline: no question headed the entry
    assert entry_question(sections[1]) == "How do I copy to a remote host?"


def test_get_rid_of_asks_to_remove_and_names_no_word_a_document_lacks() -> None:
    terms = _terms({"point": 4, "float": 2, "arithmet": 2, "bash": 30, "thread": 5, "safe": 5, "remov": 3})
    # a new user's trial: "no document mentions 'rid'" for "How do I get rid of ...?"
    summary = ExtractiveSummarizer().summarize("How do I get rid of the boiling mercury in bash?",
                                               _context(SHELL_README, MANUAL, terms=terms))
    assert summary.abstained and "'rid'" not in summary.notes[0] and "'mercury'" in summary.notes[0], summary.notes


def test_a_bullet_that_opens_with_the_sentence_it_refers_to_says_each_sentence_once_and_cites_its_own() -> None:
    from citesum.summarize.extractive import _IMPERSONAL

    # the same sentence after two others, in two sections of one document: stated once
    twice = ("Copying\n=======\n\nmytool copies the files you name. It will report each file it copies to the log.\n\n"
             "Logging\n=======\n\nThe log lists every action mytool takes. It will report each file it copies to "
             "the log.\n")
    said = [b.text for b in ExtractiveSummarizer().summarize("What will mytool report to the log?",
                                                             _context(twice)).bullets]
    assert sum("It will report each file it copies to the log." in text for text in said) == 1, said
    # another document that states the fact after another sentence does not state the sentence before it
    other = "othertool\n=========\n\nRun othertool with one path. It will report each file it copies.\n"
    answer = ExtractiveSummarizer().summarize("What does mytool report?", _context(MYTOOL_README, other))
    opening = [b for b in answer.bullets if b.text.startswith("Run mytool with two paths.")]
    assert opening and opening[0].citations == ("d1",), answer.bullets
    # under a tight word limit the sentence that answers is kept, without the one it refers to
    short = ExtractiveSummarizer(ExtractiveOptions(max_words=11)).summarize("What does mytool report?",
                                                                            _context(MYTOOL_README))
    assert [b.text for b in short.bullets] == ["It will report each file it copies."], short.bullets
    # at most two sentences before it, and only while they refer back in turn
    chain = ("mytool\n======\n\nmytool copies the files you name to the backup host. It checks each copy against the "
             "original. This check reads every byte of the files again. It then reports the files that differ.\n")
    assert ExtractiveSummarizer().summarize("What does mytool report after checking?", _context(chain)).bullets[0] \
        .text == ("It checks each copy against the original. This check reads every byte of the files again. It "
                  "then reports the files that differ.")
    # a sentence that goes on from the one before with a connective (a new user's trial: "For these scenarios you
    # have two options ...")
    upload = ("Uploading\n=========\n\nYou may upload a package to your own archive or to the main one. For these "
              "cases you have two tools, dput and dupload. Otherwise, copy the files by hand.\n")
    assert ExtractiveSummarizer().summarize("What if I use neither tool to upload?", _context(upload)).bullets[0] \
        .text == ("You may upload a package to your own archive or to the main one. For these cases you have two "
                  "tools, dput and dupload.")
    # a unit the segmenter cut inside a sentence (after a URL that ends its line, in valgrind's FAQ) opens no bullet
    from citesum.summarize.extractive import _writes_in_turn

    faq = "Start by reading\nhttp://x/y: <http://x/y> if you\nabsolutely want to do that. But beware: it is messy."
    assert not _writes_in_turn(["absolutely want to do that.", "But beware: it is messy."], faq)
    assert _writes_in_turn(["Run it.", "It works."], "Usage\n-----\nRun it. It works.")
    # an "it" that names nothing, and one that names what the sentence before it does
    for impersonal in ["It is recommended to run fsck weekly.", "It may be necessary to reboot.", "It seems that "
                       "the cache is stale.", "It takes a long time to build.", "It is worth noting that X."]:
        assert _IMPERSONAL.match(impersonal), impersonal
    for referring in ["It takes 2 arguments.", "It is useful for debugging.", "It is safe to call from any thread.",
                      "It is known as foo.", "It is a tool that copies."]:
        assert not _IMPERSONAL.match(referring), referring


# a library's FAQ of connection errors: each error's message heads the paragraph that explains it, and a log in
# another entry shows the message again; a second document tells of morning requests in the asker's words
CONNECTION_FAQ = """Connections and engines
=======================

How do I pool database connections?

The engine pools connections for each request of a web application automatically, and a request gets the
connection that the request before it gave back.

"MySQL server has gone away"

The primary cause of this error is that the MySQL connection has timed out and has been closed by the server.
The MySQL server closes connections which have been idle a period of time which defaults to eight hours.
Set the pool's recycle time below that to replace such connections before they are used.

How do I retry a statement?

A statement that failed is not retried, since its transaction is lost with its connection:

    OperationalError: (2006, 'MySQL server has gone away')

The recipe above retries the whole transaction once.
"""
MORNING_NOTES = """Deploying the app
=================

The first request every morning warms the cache of the Flask app, so it takes longer than the requests after it.
After that first request, the app works from its cache and its requests are answered quickly all day.
"""


def _faq_index(tmp_path: Path):  # type: ignore[no-untyped-def]
    from citesum.index.store import Index

    index = Index.create(tmp_path / "ix")
    index.add([Document("connections.txt", "Connections and engines", CONNECTION_FAQ),
               Document("deploying.txt", "Deploying the app", MORNING_NOTES)])
    return index


def test_a_quoted_message_is_answered_by_what_the_documents_write_under_it(tmp_path: Path) -> None:
    """The asker quotes the error and tells their case in words of their own; the manual explains the error under
    the message, in its words. Before, the morning notes answered (they share "first request", "morning",
    "works") and the explanation, sharing few of the question's words, stayed under the answer floor."""
    from citesum.pipeline import Pipeline

    question = ('Our Flask app talks to MySQL. Every morning the first request fails with "MySQL server has gone '
                'away", and after that it works. What is happening?')
    summary = Pipeline(_faq_index(tmp_path)).summarize(question).summary
    stated = [bullet.text for bullet in summary.bullets]
    assert stated and stated[0].startswith("The primary cause of this error is that the MySQL connection has timed "
                                           "out"), stated
    assert not any("morning" in text for text in stated), stated
    assert all(bullet.citations == ("connections.txt",) for bullet in summary.bullets)
    # the sentence after a log line of the message, in another entry, is there too, but the explanation under
    # the message outranks it
    assert not any(text.startswith("The recipe above") for text in stated), stated


def test_quoted_messages_are_what_a_question_quotes_of_two_words_or_more() -> None:
    from citesum.summarize.extractive import quoted_messages

    assert quoted_messages('It fails with "MySQL server has gone away", why?') == ["MySQL server has gone away"]
    assert quoted_messages("The '# pragma: no cover' comments are ignored. Why?") == ["pragma: no cover"]
    assert quoted_messages("It prints \u201cNo valid files found in content\u201d and `make clean` broke it") == [
        "No valid files found in content", "make clean"]
    # an apostrophe quotes nothing, nor does a quoted word (a name, which the question's words weigh already)
    assert quoted_messages("PARI/GP's Configure says it can't find readline. What's wrong?") == []
    assert quoted_messages('Why does "dpkg" refuse?') == []
    # a short quote's closing mark opens no quote of the words after it
    assert quoted_messages('Is "ls" slow and "rm" fast when "rm -rf" runs?') == ["rm -rf"]
    assert quoted_messages("Why does `ls` fail, and `rm -rf` too?") == ["rm -rf"]


def test_a_quote_is_found_as_whole_words() -> None:
    """"make clean" is not written where a document writes "make cleanall": the sentences there keep no
    advantage."""
    from citesum.summarize.extractive import _after_quoted, _Sentence

    text = "Type make cleanall to remove every build. The tree is then as it was checked out.\n"
    context = _context(text)
    sentences = [_Sentence("Type make cleanall to remove every build.", 1, "d1", frozenset(), None),
                 _Sentence("The tree is then as it was checked out.", 1, "d1", frozenset(), None)]
    assert _after_quoted(context, sentences, ["make clean"], 3) == []
    assert _after_quoted(context, sentences, ["make cleanall"], 3) == sentences


def test_a_message_listed_in_code_is_explained_before_the_next_listing() -> None:
    """Bochs' manual lists its boot errors in a table, then in blocks of code, each block followed by what its
    errors mean. The sentences after the table, and those after the next block, explain other errors: before,
    all of them counted as written under the quoted message, and the next block's explanation was the answer."""
    from citesum.summarize.extractive import _after_quoted, _Sentence

    said = ["For the first two errors, a cdrom is probably missing from the configuration file.",
            "For these errors, the data has been read from the cd, but the cd does not conform to the El Torito "
            "specification.",
            "This is what you get if the cd is not bootable.",
            "now the cd is eltorito, but the boot catalog is corrupted."]
    text = ("| Error code | Reason |\n|---|---|\n| 0x01 | no atapi device found |\n| 0x04 | cd is not eltorito (BRVD) |"
            f"\n```\n0x01 no atapi device found\n```\n{said[0]}\n```\n0x04 cd is not eltorito (BRVD)\n"
            f"0x05 cd is not eltorito (ISO TAG)\n```\n{said[1]} {said[2]}\n```\n0x08 boot catalog : bad header\n"
            f"```\n{said[3]}\n")
    sentences = [_Sentence(words, 1, "d1", frozenset(), None) for words in said]
    assert _after_quoted(_context(text), sentences, ["cd is not eltorito (BRVD"], 3) == sentences[1:3]
    # a message a sentence writes is explained by the sentences after it, a block of code between them or not
    prose = f"When the log says cd is not eltorito, read on.\n```\nisoinfo -d -i cd.iso\n```\n{said[1]}\n"
    sentences = [_Sentence("When the log says cd is not eltorito, read on.", 1, "d1", frozenset(), None),
                 _Sentence(said[1], 1, "d1", frozenset(), None)]
    assert _after_quoted(_context(prose), sentences, ["cd is not eltorito"], 3) == sentences
    # a fence left unpaired before it turns neither reading around: a line that opens and closes a fence, and the
    # first piece of a long block the chunker cut, a passage of its own (blocks as the segmenter reads them)
    listed = [_Sentence(words, 1, "d1", frozenset(), None) for words in said]
    before = "``` make ``` builds it all.\n\n"
    assert _after_quoted(_context(before + prose), sentences, ["cd is not eltorito"], 3) == sentences
    assert _after_quoted(_context(before + text), listed, ["cd is not eltorito (BRVD"], 3) == listed[1:3]
    piece = "Errors are listed below.\n```\nE1 disk full\nE2 bad sector"
    for after, stated, expected in ((prose, sentences, sentences), (text, listed, listed[1:3])):
        passages = (Passage("d1::0", "d1", 0, 0, len(piece), piece, 12),
                    Passage("d1::4", "d1", 4, 0, len(after), after, 80))
        block = ContextBlock(1, "d1", "D1", f"{piece}\n{after}", 92, passages, 1.0)
        context = Context((block,), "original", 10_000, 100, None)
        assert _after_quoted(context, stated, ["cd is not eltorito"], 3) == expected
    # a long listing the chunker cut, its pieces going on from each other: its explanation is right after it
    pieces = ("```\nE1 disk full\nE2 bad sector", "E9 timeout on the link\n```")
    explained = "The link to the server dropped: replace the cable and try again."
    passages = (Passage("d1::0", "d1", 0, 0, len(pieces[0]), pieces[0], 100),
                Passage("d1::1", "d1", 1, 0, len(pieces[1]), pieces[1], 20, continues=True),
                Passage("d1::2", "d1", 2, 0, len(explained), explained, 15))
    block = ContextBlock(1, "d1", "D1", "\n".join([*pieces, explained]), 135, passages, 1.0)
    stated = [_Sentence(explained, 1, "d1", frozenset(), None)]
    assert _after_quoted(Context((block,), "original", 10_000, 100, None), stated, ["E9 timeout"], 3) == stated


def test_a_quote_no_document_writes_changes_nothing(tmp_path: Path) -> None:
    from citesum.pipeline import Pipeline

    index = _faq_index(tmp_path)
    question = 'How do I pool database connections? The docs say "each request gets a connection".'
    with_rule = Pipeline(index).summarize(question).summary
    without = Pipeline(index, summarizer=ExtractiveSummarizer(ExtractiveOptions(quoted_factor=None))
                       ).summarize(question).summary
    assert [b.text for b in with_rule.bullets] == [b.text for b in without.bullets]
    with pytest.raises(ConfigError, match="quoted_sentences"):
        ExtractiveOptions(quoted_sentences=0)


def test_the_askers_stance_is_no_subject_a_document_must_mention() -> None:
    from citesum.summarize.extractive import absent_words, tokenize

    text = ("Terminating the library\n\nBefore your application exits, you should terminate the library if it "
            "has been initialized. Modern systems are very good at freeing resources allocated by programs that "
            "exit, but the library sometimes has to change global system settings and these might not be "
            "restored without termination.\n")
    question = "Is it really necessary to terminate the library before my program exits? The OS frees it anyway."
    # the collection's other documents speak of what is necessary and of the OS
    terms = _terms({stem: 3 for words in tokenize([text, "necessary OS"]) for stem in words})
    # "anyway" and "really" are the asker's, not what the documents must speak of
    assert absent_words(question, terms) == []
    assert absent_words("How am I supposed to start it? Actually, is there somehow a way, please?",
                        _terms({"start": 3})) == []
    summary = ExtractiveSummarizer().summarize(question, _context(text, terms=terms))
    assert not summary.abstained and "terminate the library" in summary.bullets[0].text


#: GNU indent's manual on tabs, as its Texinfo page reads
INDENT_TABS = """1.8 Indentation

By default, indent will use tabs to indent as far as possible, and then pad with spaces until the desired position
is reached. For those that prefer spaces to tabs, indent provides the -nut option.

Appendix A Option Summary

'-nut', '--no-tabs': Use spaces instead of tabs.
'-as', '--align-with-spaces': If using tabs for indentation, use spaces for alignment.
"""


def test_a_choice_made_the_other_way_round_does_not_answer() -> None:
    question = "How do I make indent use tabs instead of spaces?"
    summary = ExtractiveSummarizer().summarize(question, _titled(("indent: Indent and Format C Program Source",
                                                                   INDENT_TABS)))
    stated = [bullet.text for bullet in summary.bullets]
    # before: the option that does the opposite, holding every word the question weighs, outranked the answer
    # (over the manual's whole page it was the answer; here the question was turned away, it the first lead)
    assert stated and stated[0].startswith("By default, indent will use tabs to indent"), stated
    assert not any("instead of tabs" in text or "prefer spaces to tabs" in text for text in stated), stated
    from citesum.summarize.extractive import choices

    assert choices("sync it through systemd rather than a cron job") == {("systemd", "cron")}
    assert choices("Use it instead of them.") == set()  # (a word the analyser drops makes no choice)


#: mksh's README.Debian (its title is a heading of the text), beside another package's README
MKSH_README = """Notes for the mksh binary package

The MirBSD Korn Shell provides a workable /bin/sh for Debian; installation however is not automatic due to
Debian #540512 (a wontfix RC bug in dash).

After installation, it is strongly recommended to copy the file
/etc/skel/.mkshrc into your home directory to get a nicer prompt,
pushd/popd/dirs/setenv/enable functionality, some aliases, etc.

The /bin/lksh binary is used to run legacy ksh88 and pdksh scripts. It is not intended for interactive use.
"""
SCHEMA_README = """schema is a library for validating Python data structures, such as those obtained from config-files,
forms, external services or command-line parsing, converted from JSON/YAML (or something else) to Python
data-types.

If Schema(...) encounters a type (such as int, str, object, etc.), it will check if the corresponding piece of
data is an instance of that type, otherwise it will raise SchemaError.
"""


def test_the_askers_own_time_and_a_pronoun_name_no_subject() -> None:
    # "I just installed mksh ...": "just", a word of the other README's title ("Schema validation just got
    # Pythonic"), was read as a subject the question names, and the answer, which does not say "just", was
    # scaled down under the floor
    question = ("I just installed mksh on Debian and the prompt looks bare. What does the package suggest I do to "
                "get a nicer prompt and the usual conveniences?")
    context = _titled(("Additional documentation and examples", MKSH_README),
                      ("Schema validation just got Pythonic", SCHEMA_README))
    from citesum.summarize.extractive import named_subjects, rarest_asked_word

    assert "just" not in named_subjects(question, context)
    summary = ExtractiveSummarizer().summarize(question, context)
    assert not summary.abstained and "/etc/skel/.mkshrc" in summary.bullets[0].text, summary
    # "them" points back to what the question named: it is no word the answer must hold
    assert rarest_asked_word("The tag pages inline every post. How can I make them cheaper?",
                             _terms({"them": 1, "cheaper": 3, "tag": 40, "page": 90, "inline": 30, "post": 60})
                             ) == "cheaper"
