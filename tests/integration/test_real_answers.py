"""Answers a person can trust on the documents they bring (issue 44), on real files: a hard-wrapped Debian
specification (.txt), Texinfo HTML manual pages with their navigation bar, a TeX-made PDF manual with running
page headers, and an OCR'd PDF with a running header (from pypdf's source distribution). The index is built in one process and asked from another, as a user does.

The Debian files come from the machine's packages (installed with apt-get when missing, as root in CI); outside
CI a machine that cannot install them skips, CI (CITESUM_REQUIRE_REAL_FILES=1) fails instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


#: (Debian package, file it ships): what a person would index from their machine's documentation
DEBIAN_FILES = {
    "dpkg-triggers.txt": ("dpkg", "/usr/share/doc/dpkg/spec/triggers.txt"),
    "Thread-Safety.html": ("libffi-dev", "/usr/share/doc/libffi-dev/html/Thread-Safety.html"),
    "The-Closure-API.html": ("libffi-dev", "/usr/share/doc/libffi-dev/html/The-Closure-API.html"),
    "libtasn1.pdf": ("libtasn1-doc", "/usr/share/doc/libtasn1-doc/libtasn1.pdf"),  # a TeX manual, page headers
    "bashref.pdf": ("bash-doc", "/usr/share/doc/bash-doc/bashref.pdf"),  # a Texinfo manual with code examples
}
CITESUM = [sys.executable, "-m", "citesum.cli"]


def _unavailable(message: str) -> None:
    if os.environ.get("CITESUM_REQUIRE_REAL_FILES"):
        pytest.fail(message)
    pytest.skip(message)


def _debian_file(package: str, path: str) -> Path:
    """The file, installing its package first when it is missing (Debian images may exclude /usr/share/doc:
    the package's archive is then unpacked aside)."""
    target = Path(path)
    if target.exists():
        return target
    if shutil.which("apt-get") is None:
        _unavailable(f"{path} is missing and there is no apt-get to install {package}")
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package], capture_output=True)
    if not target.exists():
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package], capture_output=True)
    if not target.exists():  # docs excluded from installs: take the file from the package's archive
        aside = Path(os.environ.get("TMPDIR", "/tmp")) / f"citesum-deb-{package}"
        fetched = subprocess.run(["apt-get", "download", package], cwd=aside.parent, capture_output=True, text=True)
        debs = sorted(aside.parent.glob(f"{package}_*.deb"))
        if fetched.returncode == 0 and debs:
            subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(aside)], capture_output=True)
            target = aside / path.lstrip("/")
    if not target.exists():
        _unavailable(f"could not install {package} for {path}")
    return target


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory, real_files: Path) -> Path:
    folder = tmp_path_factory.mktemp("realdocs") / "docs"
    folder.mkdir()
    for name, (package, path) in DEBIAN_FILES.items():
        shutil.copy(_debian_file(package, path), folder / name)
    shutil.copy(next(real_files.glob("pypdf-*")) / "resources" / "Seige_of_Vicksburg_Sample_OCR.pdf", folder / "vicksburg.pdf")
    index = folder.parent / "index"
    built = subprocess.run([*CITESUM, "index", str(folder), "--index", str(index)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return index


def _ask(index: Path, question: str) -> dict:
    """``citesum summarize QUESTION --json`` with every default, in a process of its own."""
    done = subprocess.run([*CITESUM, "summarize", question, "--index", str(index), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _document_text(index: Path, name: str) -> str:
    from citesum.index.store import Index

    return next(d.text for d in Index.open(index).documents() if d.metadata.get("file", d.id).endswith(name))


def _source_of(answer: dict, document_id: str) -> str:
    return next(s["source"] for s in answer["sources"].values() if s["document_id"] == document_id)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_specific_question_gets_the_sentence_that_answers_it_quoted_whole(real_index: Path) -> None:
    answer = _ask(real_index, "Is libffi thread-safe?")
    bullets = [b["text"] for b in answer["bullets"]]
    # the manual's own sentence, as it writes it ("libffi", not "Libffi"), first; a direct question gets a short
    # answer (before: five bullets, among them the navigation bar "Next: ... Up: Using libffi [Contents][Index]")
    assert bullets[0] == "libffi is not completely thread-safe."
    assert 1 <= len(bullets) <= 2
    assert not any(re.search(r"\b(?:Next|Previous|Up):|\[Index\]", b) for b in bullets)
    # it cites the page that states it, and only that page
    assert [_source_of(answer, c).endswith("Thread-Safety.html") for c in answer["bullets"][0]["citations"]] == [True]
    assert answer["abstained"] is False


def test_bullets_from_a_hard_wrapped_text_are_whole_sentences_of_it(real_index: Path) -> None:
    answer = _ask(real_index, "How can a program activate a dpkg trigger explicitly?")
    assert answer["bullets"]
    # before: "When one of the triggers in which a package is interested is", a wrapped line
    _assert_whole_sentences([b["text"] for b in answer["bullets"]], _flat(_document_text(real_index, "dpkg-triggers.txt")))


def _assert_whole_sentences(bullets: list[str], text: str) -> None:
    """Each bullet is in the document whole: it starts where a sentence starts and ends as a sentence does."""
    for bullet in bullets:
        assert bullet in text and re.search(r"[.!?][\"')\]]*$", bullet), bullet
        assert not bullet.startswith(("-", "•", "*"))
        start = text.index(bullet)
        assert start == 0 or re.search(r"[.!?:][\"')\]]*\s$|[-=]{3,}\s$|\d\.\s$|\)\s$", text[:start][-12:]), \
            text[start - 60 : start + 40]


def test_a_broad_question_gets_several_facts(real_index: Path) -> None:
    answer = _ask(real_index, "What does the specification say about trigger cycles?")
    bullets = [b["text"] for b in answer["bullets"]]
    assert len(bullets) >= 2, bullets
    # each names a cycle or is in the section "Cycle detection" (the specification's last), which tells how
    text = _flat(_document_text(real_index, "dpkg-triggers.txt"))
    assert all("cycle" in b.lower() or text.index(b) > text.index("Cycle detection ---") for b in bullets), bullets
    # before: 'Which we will call a “trigger cycle”.', the end of a sentence that began on the line above
    _assert_whole_sentences(bullets, text)


def test_an_unanswerable_question_is_answered_with_no_bullet_and_leads(real_index: Path) -> None:
    answer = _ask(real_index, "Can libffi be compiled to WebAssembly with Emscripten?")
    # before: five confident, cited, unrelated bullets
    assert answer["bullets"] == [] and answer["abstained"] is True
    assert answer["notes"] and answer["notes"][0].startswith("No passage in the")
    assert 1 <= len(answer["leads"]) <= 3 and all(lead["citations"] for lead in answer["leads"])


def test_a_pdf_manual_gives_whole_sentences_never_its_headings_or_definitions(real_index: Path) -> None:
    answer = _ask(real_index, "What does asn1Parser do?")
    bullets = [b["text"] for b in answer["bullets"]]
    # before: "3 Utilities 3.1 Invoking asn1Parser asn1Parser reads a single file ..." (the section headings run
    # into the sentence) and a function's definition line with its parameters, among five bullets
    assert 1 <= len(bullets) <= 2, bullets
    text = _flat(_document_text(real_index, "libtasn1.pdf"))
    for bullet in bullets:
        assert bullet in text and re.search(r"[.!?][\"')\]]*$", bullet), bullet
        assert not re.match(r"\d+(?:\.\d+)*\s", bullet) and "[Function]" not in bullet, bullet
    assert all(_source_of(answer, c).endswith("libtasn1.pdf") for b in answer["bullets"] for c in b["citations"])


def test_a_pdf_heading_as_wide_as_half_a_line_is_not_run_into_the_sentence_below(real_index: Path) -> None:
    # the Bash manual's heading "Invoked as an interactive login shell, or with --login" is longer than half
    # the median line (its code examples make lines short), and was run into the paragraph below it
    stored = _document_text(real_index, "bashref.pdf")
    assert "--login When Bash is invoked" not in stored and "--login\n\nWhen Bash is invoked" in stored
    text = _flat(stored)
    answer = _ask(real_index, "Which file does Bash read first when it is invoked as an interactive login shell?")
    bullets = [b["text"] for b in answer["bullets"]]
    assert bullets and bullets[0].startswith("When Bash is invoked as an interactive login shell"), bullets
    assert "/etc/profile" in bullets[0] and bullets[0] in text and bullets[0].endswith(".")
    assert "\n\nWhen Bash is invoked as an interactive login shell" in stored  # a paragraph of its own


def test_a_question_about_what_no_document_uses_gets_no_bullet(real_index: Path) -> None:
    answer = _ask(real_index, "What is the boiling point of mercury?")
    # before: "Bash does not understand floating point arithmetic."-style bullets, for the word "point"
    assert answer["bullets"] == [] and answer["abstained"] is True
    assert "'boiling'" in answer["notes"][0] and "'mercury'" in answer["notes"][0]
