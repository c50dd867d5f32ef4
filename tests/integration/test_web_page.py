"""The web page in a real headless Chromium (Debian's ``chromium`` package, driven by Playwright) against a
real ``citesum serve`` process: ask, click a citation, see the verifier's evidence highlighted; upload a file,
follow its job, find it. With ``CITESUM_SCREENSHOTS=DIR`` the pages are saved there (``make screenshots``
writes the README's images to docs/screenshots)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from citesum.index.store import Index, IndexSettings
from citesum.pack import PackOptions
from citesum.summarize import summarize_query
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
from citesum.summarize.verify import check_summary
from citesum.types import Document
from live import citesum_serve

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the browser fixture says what is missing, and fails in CI
    expect = sync_playwright = None

QUESTION = "What is happening with the city's water supply?"
#: how long (ms) a test waits for an answer to show: a served index's first questions load the models they use
#: (the answer's second opinion loads its own), which takes more than Playwright's 5 s on a busy machine
ANSWER_SHOWN = 30_000
RESERVOIR = "How much did the Lakemont reservoir fall?"
# Characters outside the Basic Multilingual Plane before the evidence: Python counts them as one character,
# JavaScript as two, so a page that used the offsets as they come would highlight the wrong text.
WAVES = Document("waves.txt", "Reservoir watch 🌊",
                 "🌊🌊 Reservoir watch 🌊 — 𝔚𝔞𝔱𝔢𝔯 𝔫𝔢𝔴𝔰\n\nThe Lakemont reservoir fell to 41 percent of capacity in "
                 "August, its lowest level since 1998. Residents were asked to save water.")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]


def _browser_or_skip() -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    missing = [] if chromium else ["Debian's chromium (apt-get install chromium)"]
    if sync_playwright is None:
        missing.append("playwright (pip install playwright)")
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if os.environ.get("CITESUM_REQUIRE_BROWSER"):
            pytest.fail(message)  # CI installs both: these tests must run there
        pytest.skip(message)
    return str(chromium)


def _index(folder: Path, haystack: Any) -> Path:
    index = Index.create(folder, IndexSettings())
    index.add([*haystack.documents, WAVES])
    return index.path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = _browser_or_skip()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 820})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # the page runs under a strict Content-Security-Policy: a violation means something of it did not load
    opened.on("console", lambda message: errors.append(message.text)
              if "Content Security Policy" in message.text else None)
    yield opened
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _served_files(tmp_path: Path, folder: Path) -> tuple[Any, list[Document]]:
    """`citesum serve` over the files of ``folder``, read as `citesum index` reads them, and their documents."""
    from citesum.ingest import ingest_paths

    documents, _ = ingest_paths([folder])
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    return citesum_serve(index.path, tmp_path / "serve.log"), documents


def _asked(page: Any, server: Any, question: str) -> None:
    """The page opened on ``server``, once it counts its documents, with ``question`` asked."""
    page.goto(server.url)
    page.locator("#status", has_text="documents").wait_for()
    page.fill("#query", question)
    page.click("#ask-button")


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CITESUM_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _expected_evidence(index: Path, question: str) -> dict[tuple[int, str], str]:
    """What the citation verifier finds, computed here through the library (not the service): for each
    (bullet, cited document), the supporting sentence the page must highlight."""
    summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=5, max_words=250))
    with Index.open(index).read() as view:
        summary = summarize_query(question, view, summarizer, options=PackOptions(budget=15_000))
        _, checks = check_summary(summary, repair=False)
    return {(number, c.document_id): c.evidence.text for number, verified in enumerate(checks)
            for c in verified.checks if c.evidence is not None}


@pytest.mark.slow
def test_ask_click_a_citation_and_see_the_evidence_highlighted(page: Any, tmp_path: Path, haystack: Any,
                                                               screenshots: Path) -> None:
    index = _index(tmp_path / "ix", haystack)
    expected = _expected_evidence(index, QUESTION)
    server = citesum_serve(index, tmp_path / "serve.log")
    try:
        page.goto(server.url)
        page.locator("#status", has_text="documents").wait_for()
        page.fill("#query", QUESTION)
        page.keyboard.press("Enter")  # Enter sends; the page is usable with the keyboard
        page.wait_for_selector("#bullets-list li")
        bullets = page.locator("#bullets-list > li")
        assert bullets.count() >= 1  # as many as facts answer the question
        # sources are numbered as the reader meets them, from 1, whatever the context's numbers
        expect(page.locator("#bullets-list button.chip").first).to_have_text(re.compile(r"^\[1(, p\. \d+)?\]$"))
        assert page.locator("#sources li").first.get_attribute("value") == "1"

        chips = page.locator("button.chip")
        assert chips.count() >= 2
        checked = 0
        for position in range(min(chips.count(), 6)):
            chip = chips.nth(position)
            bullet, document_id = int(chip.get_attribute("data-bullet")), chip.get_attribute("data-document")
            with page.expect_response(lambda r: "/documents/" in r.url):  # this chip's document, not the last one's
                chip.click()
            expect(page.locator("#doc-source")).to_have_text(document_id)
            expect(page.locator("#doc-text mark")).to_have_text(expected[(bullet, document_id)])
            expect(chip).to_have_attribute("aria-pressed", "true")
            assert _in_view(page, "#doc-text mark")
            checked += 1
        assert checked >= 2

        # the document with characters beyond the BMP: its highlighted span is still the evidence exactly
        page.fill("#query", RESERVOIR)
        page.click("#ask-button")  # the chips of this answer, not the last one's: the question's own document
        page.locator(f"button.chip[data-document='{WAVES.id}']").first.wait_for()
        expect(page.locator("#ask-button")).to_be_enabled()  # the answer is whole
        waves = page.locator(f"button.chip[data-document='{WAVES.id}']").first
        waves.click()
        expect(page.locator("#doc-title")).to_contain_text("Reservoir watch")
        bullet = int(waves.get_attribute("data-bullet"))
        sentence = _expected_evidence(index, RESERVOIR)[(bullet, WAVES.id)]
        assert sentence.startswith("The Lakemont reservoir fell to 41 percent")
        expect(page.locator("#doc-text mark")).to_have_text(sentence)
        first = page.locator("button.chip[data-bullet='0']").first  # a plain document, for the README's picture
        first.click()
        expect(page.locator("#doc-source")).to_have_text(first.get_attribute("data-document"))
        page.screenshot(path=str(screenshots / "summary-and-evidence.png"))

        # keyboard: Escape closes the document and gives the focus back to the chip; Enter on a chip opens it
        page.keyboard.press("Escape")
        expect(page.locator("#document")).to_be_hidden()
        expect(first).to_be_focused()
        page.keyboard.press("Enter")
        page.locator("#doc-text mark").wait_for()
        # the focus is in the document's text, so that the keys that scroll scroll it (a new user's trial: Page
        # Down scrolled the window, the focus being on the pane around the text)
        expect(page.locator("#doc-text")).to_be_focused()
        page.evaluate("() => { const t = document.getElementById('doc-text'); t.style.maxHeight = '120px'; "
                      "t.scrollTop = 0; }")
        page.keyboard.press("PageDown")
        page.wait_for_function("() => document.getElementById('doc-text').scrollTop > 0")
        page.keyboard.press("Escape")
        expect(first).to_be_focused()

        # a clear error: a question over the service's limit, shown by the form; the old answer goes
        page.fill("#query", "x" * 2001)
        page.click("#ask-button")
        expect(page.locator("#error")).to_contain_text("2,001 characters")
        expect(page.locator("#answer")).to_be_hidden()
    finally:
        server.close()


def _in_view(page: Any, selector: str) -> bool:
    return bool(page.evaluate("""s => {
        const mark = document.querySelector(s).getBoundingClientRect();
        const pane = document.getElementById('doc-text').getBoundingClientRect();
        return mark.top >= pane.top - 1 && mark.bottom <= pane.bottom + 1 && mark.bottom <= window.innerHeight;
    }""", selector))


@pytest.mark.slow
def test_upload_follow_the_job_then_find_the_file(page: Any, tmp_path: Path, haystack: Any,
                                                  screenshots: Path) -> None:
    index = _index(tmp_path / "ix", haystack)
    note = tmp_path / "ferry timetable.md"
    note.write_text("# Ferry timetable\n\nThe Zephyr ferry will cross Harlow Bay every 40 minutes from 1 May, "
                    "with a night service on Fridays.\n", encoding="utf-8")
    bad = tmp_path / "empty.txt"
    bad.write_bytes(b"")
    server = citesum_serve(index, tmp_path / "serve.log")
    try:
        page.goto(server.url)
        page.set_input_files("#files", [str(note), str(bad)])
        page.click("#upload-button")
        expect(page.locator("#job")).to_contain_text("searchable now", timeout=60_000)
        report = page.locator("#job li")
        assert report.count() == 2 and "1 document" in report.nth(0).inner_text()
        assert "empty" in report.nth(1).inner_text()
        page.screenshot(path=str(screenshots / "upload.png"))

        page.check("input[name=mode][value=search]")
        page.fill("#query", "Zephyr ferry night service")
        page.click("#ask-button")
        first = page.locator("#hits li").first
        expect(first).to_contain_text("Ferry timetable")
        expect(first).to_contain_text("uploads/ferry timetable.md")
        first.locator("button").click()
        expect(page.locator("#doc-text mark")).to_contain_text("Zephyr ferry")
        page.screenshot(path=str(screenshots / "search.png"))
        page.keyboard.press("Escape")  # the focus goes back to the result that opened the document
        expect(first.locator("button")).to_be_focused()

        # an upload the service refuses: the message shows in the upload form, not at the top of the page
        image = tmp_path / "photo.png"
        image.write_bytes(b"\x89PNG\r\n\x1a\n")
        page.set_input_files("#files", [str(image)])
        page.click("#upload-button")
        expect(page.locator("#upload-error")).to_contain_text("not a supported format")
        expect(page.locator("#error")).to_be_hidden()

        # a mixed batch: each file accepted or refused on its own, and the report says which
        accept = page.locator("#files").get_attribute("accept")
        assert ".pdf" in accept.split(",") and ".rst" in accept.split(",") and ".png" not in accept.split(",")
        notes = tmp_path / "berths.rst"
        notes.write_text("Berth notes\n===========\n\nThe Zephyr ferry uses berth 4 at Harlow.\n", encoding="utf-8")
        page.set_input_files("#files", [str(image), str(notes)])
        page.click("#upload-button")
        expect(page.locator("#job")).to_contain_text("searchable now", timeout=60_000)
        assert page.locator("#job li[data-status=refused]").inner_text().startswith("photo.png: refused")
        assert "1 document" in page.locator("#job li[data-status=ingested]").inner_text()
    finally:
        server.close()


@pytest.mark.slow
def test_the_page_asks_for_the_token_and_says_when_it_is_refused(page: Any, tmp_path: Path, haystack: Any) -> None:
    token = "a-token-for-the-browser-test-0123"
    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log", token=token)
    try:
        # a link to an answer, opened by someone who has not given the token yet
        page.goto(server.url + "?q=" + QUESTION.replace(" ", "+"))
        expect(page.locator("#token-form")).to_be_visible()  # the status request was refused: 401
        # before: the forms that need the token stood above its prompt, and the header said "not connected"
        expect(page.locator("#ask")).to_be_hidden()
        expect(page.locator("#upload")).to_be_hidden()
        expect(page.locator("#status")).to_have_text("waiting for an access token")
        page.fill("#token", "not-the-right-token-at-all")
        page.click("#token-form button")
        expect(page.locator("#token-error")).to_contain_text("refused this token")
        expect(page.locator("#ask")).to_be_hidden()
        page.fill("#token", token)
        page.click("#token-form button")
        expect(page.locator("#status")).to_contain_text("documents")
        # the question refused for the want of a token is asked again once it is given
        expect(page.locator("#bullets-list li").first).to_be_visible(timeout=ANSWER_SHOWN)
        expect(page.locator("#error")).to_be_hidden()
        page.fill("#query", RESERVOIR)
        page.click("#ask-button")
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
    finally:
        server.close()


@pytest.mark.slow
def test_the_page_counts_the_seconds_while_the_model_writes(page: Any, tmp_path: Path, haystack: Any, serve) -> None:  # type: ignore[no-untyped-def]
    """A summary by a local model takes a while: the page says it waits for the model and counts the seconds,
    shows the model's window, and sends no budget of its own (the service's, fitted to the window, applies)."""
    import time as clock

    from loopback import answer

    asked: list[dict] = []

    def slow_model(handler, request, n):  # type: ignore[no-untyped-def]
        if _probed(handler, request):  # Ollama's /api/show, or citesum asking the window
            return
        asked.append(request)
        clock.sleep(4)
        answer(handler, "- The city's water supply is short: the Lakemont reservoir fell to 41 percent. [1]")

    model = serve(slow_model)
    index = _index(tmp_path / "ix", haystack)
    server = citesum_serve(index, tmp_path / "serve.log", "--llm", "openai", "--model", "m", "--base-url", model.url)
    try:
        page.goto(server.url)
        expect(page.locator("#status")).to_contain_text("window 8192 tokens")
        assert page.locator("#budget").input_value() == ""  # the service's default, shown as the placeholder
        page.fill("#query", QUESTION)
        page.click("#ask-button")
        expect(page.locator("#busy")).to_contain_text("Waiting for the model")
        expect(page.locator("#busy")).to_have_text("Waiting for the model to write the summary… 2 s", timeout=5000)
        page.wait_for_selector("#bullets-list li")
        expect(page.locator("#busy")).to_have_text("")
        assert len(asked) == 1
    finally:
        server.close()


def test_the_page_offers_what_the_service_offers(page: Any, tmp_path: Path, haystack: Any) -> None:
    """The retriever and writer lists come from the service: RAPTOR once its tree is built, ReadAgent, Summary
    RAG with a summary index; what is chosen is what the request asks."""
    from citesum.raptor import build_tree
    from citesum.summarize.statements import CentralStatements
    from citesum.summary_rag import CentralSentences, build_summary_index

    index = _index(tmp_path / "ix", haystack)
    build_tree(Index.open(index), CentralStatements(), levels=1).save(index)
    build_summary_index(Index.open(index), tmp_path / "summaries", CentralSentences())
    server = citesum_serve(index, tmp_path / "serve.log", "--summary-index", str(tmp_path / "summaries"))
    try:
        page.goto(server.url)
        page.locator("#status", has_text="documents").wait_for()
        retrievers = page.locator("#retriever option").all_inner_texts()
        # each named as a reader knows it, its API name after it (a new user's trial: "bm25-rm3", "dense-prf")
        assert "tree of summaries (raptor)" in retrievers and "words and meaning (hybrid)" in retrievers
        assert "words, widened (bm25-rm3)" in retrievers and not any("oracle" in r for r in retrievers)
        assert page.locator("#retriever").input_value() == "hybrid"  # the default stays the default
        writers = page.locator("#summarizer option").all_inner_texts()
        assert writers == ["sentences of the documents", "ReadAgent"]  # no model served: no LLM offered
        expect(page.locator("#summary-index-label")).to_be_visible()

        page.fill("#query", QUESTION)
        page.select_option("#retriever", "raptor")
        with page.expect_request(lambda r: r.url.endswith("/summarize/stream")) as sent:
            page.click("#ask-button")
        assert sent.value.post_data_json["retriever"] == "raptor"
        page.wait_for_selector("#bullets-list li")

        page.select_option("#retriever", "hybrid")
        page.select_option("#summarizer", "readagent")
        page.check("#summary-index")
        with page.expect_response(lambda r: r.url.endswith("/summarize/stream")) as answered:
            page.click("#ask-button")
        asked = answered.value.request.post_data_json
        assert asked["summarizer"] == "readagent" and asked["summary_index"] is True
        assert answered.value.status == 200
        page.wait_for_selector("#bullets-list li")
        # what the service answers that request (the page's copy of the stream is gone once its URL is updated)
        import httpx

        assert httpx.post(f"{server.url}/summarize", json=asked, timeout=60).json()["context"]["order"] == "summary-rag"

        page.check("input[name=mode][value=search]")  # a search ranks passages: RAPTOR's tree is not offered
        assert page.locator("#retriever option[value=raptor]").is_disabled()
        expect(page.locator("#summary-index-label")).to_be_hidden()
    finally:
        server.close()


def _probed(handler: Any, request: dict) -> bool:
    """Whether a scripted model server's request is not a question's: a path of another server's API (404), or
    citesum asking the model's window with an over-long prompt (refused, saying the window: 8192 tokens)."""
    from loopback import reply

    if not handler.path.endswith("/chat/completions"):
        reply(handler, 404, b"{}")
        return True
    if len(request["messages"][-1]["content"]) > 100_000:
        reply(handler, 400, b'{"message": "This model\'s maximum context length is 8192 tokens. However, you '
                            b'requested 10000000 tokens"}')
        return True
    return False


def _streaming_model(pieces: list[str], pause: float, sent: list[int], asked: list[dict]) -> Any:
    """A scripted model server that writes ``pieces`` ``pause`` seconds apart (and refuses the window probe,
    saying its window)."""
    from loopback import stream_answer

    def script(handler, request, n):  # type: ignore[no-untyped-def]
        if _probed(handler, request):
            return
        asked.append(request)
        stream_answer(handler, pieces, pause, sent)

    return script


# each holds the question's words: none is left out as not answering it
BULLETS = ["- The city's water supply is short: the Lakemont reservoir fell to 41 percent in August. [1]\n",
           "- Household water rates will rise by 7.5 percent on January 1. [2]\n",
           "- Leaks in the old mains waste water, engineers say. [3]\n"]


def _asking_a_model(page: Any, tmp_path: Path, haystack: Any, model: Any) -> Any:
    """`citesum serve` with ``model``'s server, and the question asked on the page."""
    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log", "--llm", "openai", "--model",
                           "m", "--base-url", model.url)
    try:
        page.goto(server.url)
        expect(page.locator("#status")).to_contain_text("window 8192 tokens")
        page.fill("#query", QUESTION)
        page.click("#ask-button")
    except BaseException:
        server.close()
        raise
    return server


def _asking_a_streaming_model(page: Any, tmp_path: Path, haystack: Any, model: Any) -> Any:
    """`citesum serve` with ``model``'s server, the question asked on the page, and its first bullet shown."""
    server = _asking_a_model(page, tmp_path, haystack, model)
    try:
        expect(page.locator("#bullets-list > li")).to_have_count(1, timeout=15_000)
    except BaseException:
        server.close()
        raise
    return server


def test_the_page_shows_each_bullet_as_the_model_writes_it(page: Any, tmp_path: Path, haystack: Any,
                                                             serve) -> None:  # type: ignore[no-untyped-def]
    sent: list[int] = []
    asked: list[dict] = []
    # the bullets come 4 s apart: the first one's check may take a few seconds on a loaded machine, and the page
    # must still show it alone before the next one comes
    server = _asking_a_streaming_model(page, tmp_path, haystack, serve(_streaming_model(BULLETS, 4.0, sent, asked)))
    try:
        # the first bullet is on the page, with its checked citation, while the model still writes the rest
        first = page.locator("#bullets-list > li").first
        expect(first).to_contain_text("the Lakemont reservoir fell to 41 percent")
        assert first.locator("button.chip").count() >= 1
        expect(page.locator("#stop-button")).to_be_visible()
        assert not sent  # the model server has not finished writing
        expect(page.locator("#bullets-list > li")).to_have_count(3, timeout=30_000)
        expect(page.locator("#stop-button")).to_be_hidden()  # done: the whole answer replaced the stream
        assert sent == [len(BULLETS)] and len(asked) == 1
    finally:
        server.close()


def test_stop_ends_the_model_writing(page: Any, tmp_path: Path, haystack: Any, serve) -> None:  # type: ignore[no-untyped-def]
    sent: list[int] = []
    server = _asking_a_streaming_model(page, tmp_path, haystack, serve(_streaming_model(BULLETS * 10, 1.0, sent, [])))
    try:
        page.click("#stop-button")
        expect(page.locator("#notes")).to_contain_text("Stopped")
        expect(page.locator("#bullets-list > li")).to_have_count(1)  # what came stays
        import time as clock

        deadline = clock.monotonic() + 10
        while not sent:  # the model server saw its client leave: it stopped writing
            assert clock.monotonic() < deadline, "the model kept writing after Stop"
            clock.sleep(0.1)
        assert sent[0] < len(BULLETS) * 10
    finally:
        server.close()


def test_a_pdf_citation_shows_the_printed_page_with_the_sentence_marked(page: Any, tmp_path: Path,
                                                                        real_files: Path, screenshots: Path) -> None:
    """A real scanned-and-OCR'd PDF (pypdf's test files): the citation opens the page the sentence is printed
    on, and the marked boxes hold the sentence's characters on that page."""
    import re
    from urllib.parse import parse_qs, urlparse

    import pypdfium2

    from citesum.ingest.pdf import PAGE_STARTS, page_of

    folder = tmp_path / "docs"
    folder.mkdir()
    pdf = folder / "vicksburg.pdf"
    shutil.copy(next(real_files.glob("pypdf-*")) / "resources" / "Seige_of_Vicksburg_Sample_OCR.pdf", pdf)
    server, (document,) = _served_files(tmp_path, folder)
    # a sentence printed on a later page: the question is made of its words
    starts = document.metadata[PAGE_STARTS]
    sentences = [m for m in re.finditer(r"[A-Z][^.!?]{60,200}[.!?]", document.text) if page_of(starts, m.start()) >= 3]
    question = sentences[0].group(0)
    try:
        _asked(page, server, question)
        chip = page.locator("button.chip").first
        chip.wait_for()
        label = chip.inner_text()
        printed_on = int(re.search(r"p\. (\d+)", label).group(1))  # the citation names its page: "[1, p. 4]"
        with page.expect_response(lambda r: "/printed/" in r.url) as printed:
            chip.click()
        evidence = parse_qs(urlparse(printed.value.url).query)["evidence"][0]
        image = page.locator("#doc-page-image")
        expect(image).to_be_visible()
        assert int(image.get_attribute("data-page")) == printed_on
        boxes = [tuple(map(float, b.get_attribute("data-box").split(",")))
                 for b in page.locator("#doc-page .box").all()]
        assert boxes, "the sentence is not marked on the printed page"
        # what PDFium finds printed inside the marked boxes is the evidence sentence
        drawn = pypdfium2.PdfDocument(str(pdf))[printed_on - 1]
        width, height = drawn.get_size()
        textpage = drawn.get_textpage()
        letters = lambda text: re.sub(r"[\W_]+", "", text).lower()  # noqa: E731
        inside = [letters(textpage.get_text_bounded(x0 * width, height - y1 * height, x1 * width, height - y0 * height))
                  for x0, y0, x1, y1 in boxes]
        assert all(part in letters(evidence) for part in inside)  # every box holds the evidence's own words
        assert sum(map(len, inside)) >= 20
        page.locator("#doc-page .box").first.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / "printed-page.png"))
        # the text view still shows the sentence marked in the extracted text
        page.click("#view-text")
        expect(page.locator("#doc-text mark")).to_be_visible()
    finally:
        server.close()


def test_a_books_citation_names_the_page_number_printed_on_it(page: Any, tmp_path: Path) -> None:
    """A PDF whose front matter is numbered i, ii and its body from 1: the citation names the number printed on
    the page, and the printed page shown is the file's page that carries it."""
    from fixtures import make_book_with_front_matter

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(make_book_with_front_matter())
    server, _ = _served_files(tmp_path, folder)
    try:
        _asked(page, server, "How often will the ferry to Harlow run from May?")
        chip = page.locator("button.chip").first
        chip.wait_for()
        assert chip.inner_text() == "[1, p. 1]"  # before: "[1, p. 3]", the page's place in the file
        chip.click()
        image = page.locator("#doc-page-image")
        expect(image).to_be_visible()
        assert image.get_attribute("data-page") == "3"
        expect(page.locator("#doc-note")).to_contain_text("Page 1 (page 3 of 4 in the file), as printed")
        # the page is drawn larger and smaller (a button, or "+" and "-" on the page), its marked sentence in sight
        expect(image).to_have_js_property("complete", True)
        width = image.bounding_box()["width"]
        expect(page.locator("#zoom-out")).to_have_attribute("aria-disabled", "true")
        page.click("#zoom-in")
        expect(page.locator("#zoom-level")).to_have_text("150%")
        assert image.bounding_box()["width"] == pytest.approx(1.5 * width, rel=0.02)
        page.locator("#doc-page").press("+")
        page.locator("#doc-page").press("+")
        expect(page.locator("#zoom-level")).to_have_text("250%")
        expect(page.locator("#zoom-in")).to_have_attribute("aria-disabled", "true")
        pane, box = page.locator("#doc-page").bounding_box(), page.locator("#doc-page .box").first.bounding_box()
        assert pane["x"] <= box["x"] + box["width"] / 2 <= pane["x"] + pane["width"]
        assert pane["y"] <= box["y"] + box["height"] / 2 <= pane["y"] + pane["height"]
        # at the largest size, one more "+" leaves the reader's place as it is
        scrolled = page.locator("#doc-page").evaluate("pane => [pane.scrollLeft, pane.scrollTop]")
        page.locator("#doc-page").press("+")
        assert page.locator("#doc-page").evaluate("pane => [pane.scrollLeft, pane.scrollTop]") == scrolled
        for _ in range(3):
            page.locator("#doc-page").press("-")
        expect(page.locator("#zoom-level")).to_have_text("100%")
        assert image.bounding_box()["width"] == pytest.approx(width, rel=0.02)
        # the Text view has no size to set
        page.click("#view-text")
        expect(page.locator("#zoom-in")).to_be_hidden()
    finally:
        server.close()


def test_a_docx_citation_keeps_the_text_view(page: Any, tmp_path: Path, haystack: Any) -> None:
    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log")
    try:
        page.goto(server.url)
        page.fill("#query", QUESTION)
        page.click("#ask-button")
        page.locator("button.chip").first.click()
        expect(page.locator("#doc-text mark")).to_be_visible()
        expect(page.locator("#doc-views")).to_be_hidden()  # no printed page for a text document
    finally:
        server.close()


def test_an_answer_is_kept_as_markdown_and_as_a_link_that_asks_it_again(page: Any, browser: Any, tmp_path: Path,
                                                                        haystack: Any) -> None:
    import re

    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log")
    try:
        page.goto(server.url)
        page.locator("#status", has_text="documents").wait_for()
        page.fill("#query", QUESTION)
        page.fill("#bullets", "3")
        page.click("#ask-button")
        expect(page.locator("#keep")).to_be_visible(timeout=ANSWER_SHOWN)
        bullets = page.locator("#bullets-list > li").all_inner_texts()
        page.click("#copy-markdown")
        markdown = page.input_value("#markdown")
        lines = markdown.splitlines()
        assert lines[0] == f"**{QUESTION}**"
        listed = [line for line in lines if line.startswith("- ")]
        assert len(listed) == len(bullets) and "[1]" in markdown
        references = [line for line in lines if line[:1].isdigit()]
        cited = {int(n) for line in listed for n in re.findall(r"\[(\d+)\]", line)}
        # the references numbered 1, 2, ... in the order cited, each naming its document and its file
        assert [int(line.split(".")[0]) for line in references] == list(range(1, len(cited) + 1))
        assert all(re.search(r"\(\S+\.(md|txt|html)\)$", line) for line in references), references
        link = page.locator("#answer-link").get_attribute("href")
        assert "q=" in link and "bullets=3" in link

        again = browser.new_page()  # the link, opened anywhere, asks the same question with the same settings
        try:
            again.goto(link)
            expect(again.locator("#keep")).to_be_visible(timeout=ANSWER_SHOWN)
            assert again.locator("#bullets-list > li").all_inner_texts() == bullets
            assert again.input_value("#bullets") == "3"
            # a link written by hand, with the question alone: each list shows the service's default (the Writer
            # list had shown nothing, a new user's trial)
            again.goto(server.url + "?q=" + QUESTION.replace(" ", "+"))
            expect(again.locator("#keep")).to_be_visible(timeout=ANSWER_SHOWN)
            assert again.input_value("#summarizer") == "extractive" and again.input_value("#retriever") == "hybrid"
            assert again.input_value("#bullets") == "5"
        finally:
            again.close()
    finally:
        server.close()


def test_a_read_token_picks_a_collection_and_asks_it(page: Any, browser: Any, tmp_path: Path,
                                                     screenshots: Path) -> None:
    """Two collections served by name, a tokens file: a read token sees both, picks one and asks it, with no
    upload form; a write token of one collection sees no picker and uploads to its collection."""
    import json

    from citesum.ingest import ingest_paths
    from fixtures import write_files

    folders = {}
    for name, files in (("handbook", {"leave.md": "# Annual leave\n\nEvery employee has 25 days of annual leave a "
                                                  "year. Unused leave days carry over, up to five days.\n"}),
                        ("engineering", {"deploys.md": "# Deploys\n\nA deploy to production needs two approvals "
                                                       "from the on-call team. Deploys are frozen on Fridays.\n"})):
        documents, _ = ingest_paths([write_files(tmp_path / name / "docs", files)])
        Index.create(tmp_path / name / "ix", IndexSettings()).add(documents)
        folders[name] = tmp_path / name / "ix"
    reader, writer = "dana-reads-every-collection-01", "erin-writes-engineering-0002"
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [
        {"name": "dana", "token": reader, "role": "read", "collections": ["handbook", "engineering"]},
        {"name": "erin", "token": writer, "role": "write", "collections": ["engineering"]}]}), encoding="utf-8")
    server = citesum_serve(Path(f"handbook={folders['handbook']}"), tmp_path / "serve.log", "--index",
                           f"engineering={folders['engineering']}", "--tokens", str(tokens), "--workers", "1",
                           "--search-workers", "1", token=reader)
    try:
        page.goto(server.url)
        page.fill("#token", reader)
        page.click("#token-form button")
        expect(page.locator("#collection-label")).to_be_visible()
        assert page.locator("#collection option").all_inner_texts() == ["handbook", "engineering", "all of them"]
        expect(page.locator("#upload")).to_be_hidden()  # a read token adds nothing
        page.select_option("#collection", "engineering")
        page.fill("#query", "How many approvals does a deploy to production need?")
        page.click("#ask-button")
        bullet = page.locator("#bullets-list li").first
        expect(bullet).to_contain_text("two approvals")
        bullet.locator("button.chip").first.click()
        expect(page.locator("#doc-text mark")).to_contain_text("two approvals")
        page.screenshot(path=str(screenshots / "collections.png"))
        # the link to the answer names the collection, and asks it again there
        assert "collection=engineering" in page.locator("#answer-link").get_attribute("href")

        other = browser.new_context(viewport={"width": 1280, "height": 820}).new_page()
        other.goto(server.url)
        other.fill("#token", writer)
        other.click("#token-form button")
        expect(other.locator("#status")).to_contain_text("1 documents")
        expect(other.locator("#collection-label")).to_be_hidden()  # one collection: nothing to pick
        note = tmp_path / "rollback.md"
        note.write_text("# Rollback\n\nA failed deploy is rolled back with the blue-green switch.\n", encoding="utf-8")
        image = tmp_path / "diagram.png"
        image.write_bytes(b"\x89PNG\r\n\x1a\n")
        other.set_input_files("#files", [str(note), str(image)])  # a mixed batch: each file on its own
        other.click("#upload-button")
        expect(other.locator("#job")).to_contain_text("searchable now", timeout=60_000)
        assert other.locator("#job li[data-status=refused]").inner_text().startswith("diagram.png: refused")
        assert "1 document" in other.locator("#job li[data-status=ingested]").inner_text()
        other.context.close()
        page.select_option("#collection", "handbook")
        expect(page.locator("#status")).to_contain_text("1 documents")
        page.select_option("#collection", "engineering")
        expect(page.locator("#status")).to_contain_text("2 documents")  # erin's upload, in her collection only

        # every collection at once: the answer names each document's collection, and its citation opens there
        page.select_option("#collection", "*")
        expect(page.locator("#status")).to_contain_text("3 documents")
        page.fill("#query", "How many days of annual leave does an employee have?")
        with page.expect_request(lambda r: r.url.endswith("/summarize")) as sent:
            page.click("#ask-button")
        assert sent.value.post_data_json["collections"] == ["handbook", "engineering"]
        bullet = page.locator("#bullets-list li").first
        expect(bullet).to_contain_text("25 days")
        # before: the sources named their files, not the collections that hold them
        expect(page.locator("#sources li").first).to_contain_text("· in handbook")
        bullet.locator("button.chip").first.click()
        expect(page.locator("#doc-text mark")).to_contain_text("25 days")
        assert "collection=*" in page.locator("#answer-link").get_attribute("href").replace("%2A", "*")
        page.check("input[name=mode][value=search]")
        page.fill("#query", "blue-green switch rollback")
        page.click("#ask-button")
        first = page.locator("#hits li").first
        expect(first).to_contain_text("Rollback")
        first.locator("button").click()
        expect(page.locator("#doc-text mark")).to_contain_text("blue-green")
    finally:
        server.close()


def _served_with(tmp_path: Path, haystack: Any, page_html: str, document_id: str) -> tuple[Any, list[Document]]:
    """A service over the haystack and one HTML page read as citesum reads it, and that page's documents."""
    from citesum.ingest import IngestOptions, ingest_file

    (tmp_path / "docs").mkdir()
    path = tmp_path / "docs" / "page.html"
    path.write_text(page_html, encoding="utf-8")
    documents, _ = ingest_file(path, document_id, IngestOptions())
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add([*haystack.documents, *documents])
    return citesum_serve(index.path, tmp_path / "serve.log"), documents


BORG_FAQ = """<html><head><title>Borg FAQ</title></head><body><main><h1>Frequently asked questions</h1>
<p>If you decide to accept unsafe operation for this repository, you could delete the manifest-timestamp and the
local cache:</p>
<pre>borg config repo id   # shows the REPO_ID
rm ~/.config/borg/security/REPO_ID/manifest-timestamp
borg delete --cache-only REPO</pre>
<p>This is an unsafe and unsupported way to use borg, you have been warned.</p>
<p>Borg keeps a cache of the chunks stored in the repository, and rebuilds the cache when the repository was
modified by another client since the cache was last updated.</p></main></body></html>"""


def test_a_code_block_is_shown_without_its_fences_and_a_new_question_closes_the_document(
        page: Any, tmp_path: Path, haystack: Any) -> None:
    server, documents = _served_with(tmp_path, haystack, BORG_FAQ, "borg/faq.html")
    assert "```" in documents[0].text  # the <pre> is fenced in the stored text: the segmenter reads it as code
    try:
        page.goto(server.url)
        page.fill("#query", "When does Borg rebuild its cache of the repository's chunks?")
        page.click("#ask-button")
        chip = page.locator("button.chip[data-document='borg/faq.html']").first
        chip.click()
        expect(page.locator("#doc-text mark")).to_contain_text("rebuilds the cache")
        text = page.locator("#doc-text").inner_text()
        assert "borg delete --cache-only REPO" in text and "```" not in text  # the code, not the fences
        # a new question: the document the last answer's citation opened goes with that answer
        page.fill("#query", QUESTION)
        page.click("#ask-button")
        expect(page.locator("#document")).to_be_hidden()
        page.wait_for_selector("#bullets-list li")
    finally:
        server.close()


PROFTPD_HOWTO = """<html><head><title>ProFTPD: chroot</title></head><body><main><h1>Restricting users</h1>
<p>The most common configuration requested is to restrict users to their home directories, which can be done
simply by adding the following line to your proftpd.conf:</p>
<pre>DefaultRoot ~</pre>
<p>The tilde stands for the home directory of the user who logs in.</p>
</main></body></html>"""


def test_a_bullet_shows_the_code_its_sentence_introduces(page: Any, tmp_path: Path, haystack: Any) -> None:
    server, _ = _served_with(tmp_path, haystack, PROFTPD_HOWTO, "proftpd/chroot.html")
    try:
        page.goto(server.url)
        page.fill("#query", "How do I restrict proftpd users to their home directories?")
        page.click("#ask-button")
        # before: the bullet ended "... add the following line to your proftpd.conf:", and no line followed
        page.wait_for_selector("#bullets-list li")
        bullet = page.locator("#bullets-list li").first
        expect(bullet).to_contain_text("the following line to your proftpd.conf:")
        expect(bullet.locator("pre.introduced-code")).to_have_text("DefaultRoot ~")
        page.click("#copy-markdown")  # the answer kept: the code fenced under its bullet
        assert "  ```\n  DefaultRoot ~\n  ```" in page.input_value("#markdown")
        # an abstention kept: its leads go with it, marked as no answer (before: only the note)
        page.fill("#query", "Can the uploads of proftpd users be scanned for viruses by ClamAV?")
        page.click("#ask-button")
        expect(page.locator("#leads-section")).to_be_visible(timeout=ANSWER_SHOWN)
        page.click("#copy-markdown")
        markdown = page.input_value("#markdown")
        assert "Closest passages (not answers):" in markdown and re.search(r"^- .+ \[1\]$", markdown, re.M), markdown
        # a lead's citation opens its document with the lead's sentence marked, its hard-wrapped line breaks and
        # all (before: the document from its top, nothing marked)
        lead = page.locator("#leads li").first
        lead_text = lead.evaluate("item => item.firstChild.textContent")
        lead.locator("button").first.click()
        expect(page.locator("#doc-text mark")).to_have_text(re.compile(r"\s+".join(map(re.escape, lead_text.split()))))
    finally:
        server.close()


BUS_QUESTION = "What is changing about the city's buses and trams?"
BUS_BULLETS = ["- The city's buses and trams will run every 8 minutes on the main lines from March. [1]\n"]


def test_a_question_asked_while_another_is_answered_replaces_it(page: Any, tmp_path: Path, haystack: Any,
                                                                 serve) -> None:  # type: ignore[no-untyped-def]
    """A new user's trial: a question sent (Enter) while a slower one was still answered got the slower one's
    bullets under it, whichever finished last. The newer question wins: the other is cancelled, and whatever
    still comes of it is not shown."""
    from loopback import stream_answer

    def model(handler, request, n):  # type: ignore[no-untyped-def]
        if _probed(handler, request):
            return
        if "buses" in request["messages"][-1]["content"].rsplit("Question", 1)[-1]:
            stream_answer(handler, BUS_BULLETS, 0.0)
        else:  # the water question: slow, written after the bus question's answer is on the page
            stream_answer(handler, BULLETS, 2.0)

    server = _asking_a_streaming_model(page, tmp_path, haystack, serve(model))
    try:
        page.fill("#query", BUS_QUESTION)
        page.press("#query", "Enter")  # the Ask button is disabled meanwhile; Enter still asks
        expect(page.locator("#bullets-list > li").first).to_contain_text("buses and trams", timeout=15_000)
        page.wait_for_timeout(7_000)  # as long as the water question's answer would have taken to come
        expect(page.locator("#bullets-list > li")).to_have_count(1)
        expect(page.locator("#bullets-list > li").first).to_contain_text("buses and trams")
        assert "buses" in page.locator("#answer-link").get_attribute("href")
        expect(page.locator("#error")).to_be_hidden()
        expect(page.locator("#ask-button")).to_be_enabled()
    finally:
        server.close()


def test_stop_before_the_first_bullet_says_so(page: Any, tmp_path: Path, haystack: Any,
                                              serve) -> None:  # type: ignore[no-untyped-def]
    from loopback import stream_answer

    def model(handler, request, n):  # type: ignore[no-untyped-def]
        if _probed(handler, request):
            return
        stream_answer(handler, ["Thinking", " it over", *BULLETS], 3.0)

    server = _asking_a_model(page, tmp_path, haystack, serve(model))
    try:
        expect(page.locator("#stop-button")).to_be_visible()
        page.wait_for_timeout(500)
        page.click("#stop-button")
        # before: the page went blank, with nothing to say the question was stopped
        expect(page.locator("#notes")).to_have_text("Stopped before the first bullet was written.")
        expect(page.locator("#bullets-list > li")).to_have_count(0)
        expect(page.locator("#ask-button")).to_be_enabled()
    finally:
        server.close()


def test_a_service_that_stopped_is_said_to_be_unreachable_and_the_word_limit_is_offered(
        page: Any, tmp_path: Path, haystack: Any) -> None:
    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log")
    page.goto(server.url)
    expect(page.locator("#status")).to_contain_text("documents")
    # the answer's note may say to raise the word limit: the page has the field, with the service's default
    assert page.locator("#words").get_attribute("placeholder") == "250"
    page.fill("#words", "20")
    page.fill("#query", QUESTION)
    page.click("#ask-button")
    expect(page.locator("#bullets-list > li").first).to_be_visible(timeout=ANSWER_SHOWN)
    assert "words=20" in page.locator("#answer-link").get_attribute("href")
    server.close()
    page.fill("#query", RESERVOIR)
    page.click("#ask-button")
    # before: "Failed to fetch", with the header still counting the documents as if connected
    expect(page.locator("#error")).to_contain_text("The citesum service cannot be reached")
    expect(page.locator("#status")).to_have_text("not connected")
    expect(page.locator("#ask-button")).to_be_enabled()


def test_back_goes_to_the_question_before_and_the_answer_says_how_long_it_took(page: Any, tmp_path: Path,
                                                                                haystack: Any) -> None:
    server = citesum_serve(_index(tmp_path / "ix", haystack), tmp_path / "serve.log")
    try:
        page.goto(server.url)
        expect(page.locator("#query")).to_be_focused()  # the page opens ready for a question
        expect(page.locator("#status")).to_contain_text("documents")
        for question in (QUESTION, RESERVOIR):
            page.fill("#query", question)
            page.click("#ask-button")
            expect(page.locator("#answer-link")).to_have_attribute("href", re.compile(r"Lakemont" if question ==
                                                                                         RESERVOIR else "water"))
        expect(page.locator("#took")).to_have_text(re.compile(r"^Answered in \d+(\.\d)? s\.$"))
        # before: each answer replaced the page's address, and Back left the page
        page.go_back()
        expect(page.locator("#query")).to_have_value(QUESTION)
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("water"))
        expect(page.locator("#bullets-list > li").first).to_be_visible()
        page.go_back()
        expect(page.locator("#query")).to_have_value("")
        expect(page.locator("#answer")).to_be_hidden()
        # Forward asks the question again, as it was asked, and keeps the entries after it
        page.go_forward()
        expect(page.locator("#query")).to_have_value(QUESTION)
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("water"))
        page.go_forward()
        expect(page.locator("#query")).to_have_value(RESERVOIR)
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
        # Back and Forward ask each question with its own settings: one the link does not give is reset
        page.fill("#words", "40")
        page.fill("#query", QUESTION)
        page.click("#ask-button")
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("water.*words=40"))
        page.fill("#words", "")
        page.fill("#query", RESERVOIR)
        page.click("#ask-button")
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
        entries = page.evaluate("history.length")
        page.go_back()
        expect(page.locator("#words")).to_have_value("40")
        page.go_forward()
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
        expect(page.locator("#words")).to_have_value("")
        assert page.evaluate("history.length") == entries  # asked again, in place: Forward is not lost
        # a link written by hand (no settings, "%20" for its spaces): its answer keeps its entry, and Back
        # leaves it (the review found Back asking it again and again)
        page.goto(server.url + "?q=" + RESERVOIR.replace(" ", "%20"))
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
        assert page.evaluate("history.length") == entries + 1
        page.go_back()
        expect(page.locator("#answer-link")).to_have_attribute("href", re.compile("Lakemont"))
        assert page.evaluate("history.length") == entries + 1
        # a search after a streamed answer: no Stop is left for it
        page.check("input[name=mode][value=search]")
        page.fill("#query", "Lakemont reservoir")
        page.click("#ask-button")
        expect(page.locator("#hits li").first).to_be_visible(timeout=ANSWER_SHOWN)
        expect(page.locator("#stop-button")).to_be_hidden()
        # a printed page's two views are told apart: the one shown is pressed, and looks it
        colors = page.evaluate("""() => { const b = document.createElement('button'); b.setAttribute('aria-pressed',
            'false'); const v = document.querySelector('#doc-views'); v.append(b); const off = getComputedStyle(b)
            .backgroundColor; b.setAttribute('aria-pressed', 'true'); const on = getComputedStyle(b).backgroundColor;
            b.remove(); return [off, on]; }""")
        assert colors[0] != colors[1]
    finally:
        server.close()


def test_a_pdf_lead_opens_the_page_it_is_printed_on(page: Any, tmp_path: Path, real_files: Path) -> None:
    """A new user's trial: a lead from a PDF was marked "[1]" where a bullet's is "[1, p. 2]", and opened the
    extracted text only."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(next(real_files.glob("pypdf-*")) / "resources" / "Seige_of_Vicksburg_Sample_OCR.pdf",
                folder / "vicksburg.pdf")
    server, _ = _served_files(tmp_path, folder)
    try:
        _asked(page, server, "Which pizza toppings did the soldiers at Vicksburg order?")
        chip = page.locator("#leads button.chip").first
        chip.wait_for()
        expect(page.locator("#notes")).to_contain_text("no document mentions")
        printed_on = int(re.search(r"p\. (\d+)\]", chip.inner_text()).group(1))
        with page.expect_response(lambda r: "/printed/" in r.url):
            chip.click()
        expect(page.locator("#doc-page-image")).to_have_attribute("data-page", str(printed_on))
        expect(page.locator("#doc-page .box").first).to_be_attached()
    finally:
        server.close()


AUTOSSH_README = """autossh for Debian README
=========================

Note: if your ssh client/server version is recent enough you can obtain similar
behaviour by setting ClientAliveCountMax and ServerAliveInterval in
/etc/ssh/sshd_config. See sshd_config(5).

The monitoring port is chosen at random when autossh starts, unless the
AUTOSSH_PORT environment variable names one. The port and the one above it
must be free on both hosts.

To start a tunnel at boot, add a line such as this one to the end of the file
/etc/rc.local:

    autossh -M 0 -f -N -o "ServerAliveInterval 60" \\
        -L 8080:localhost:80 tunnel@example.org
"""


def _first_citation_opened(page: Any, server: Any, question: str) -> str:
    """The document pane's text once the answer's first citation is opened, its evidence marked."""
    _asked(page, server, question)
    chip = page.locator("button.chip").first
    chip.wait_for()
    chip.click()
    expect(page.locator("#doc-text mark")).to_be_visible()
    return page.locator("#doc-text").text_content()


def test_a_hard_wrapped_paragraph_is_shown_as_one_and_code_as_it_is(page: Any, tmp_path: Path) -> None:
    """A new user's trial: a README's lines, cut at 72 characters by its file and wrapped again by the pane,
    showed as ragged lines."""
    from fixtures import write_files

    server, _ = _served_files(tmp_path, write_files(tmp_path / "docs", {"README.Debian": AUTOSSH_README}))
    try:
        shown = _first_citation_opened(page, server, "How is the autossh monitoring port chosen?")
        expect(page.locator("#doc-text mark")).to_have_text(
            "The monitoring port is chosen at random when autossh starts, unless the AUTOSSH_PORT environment "
            "variable names one.")
        # the paragraph of the marked sentence is joined, around the mark too (the review found it left ragged)
        assert "names one. The port and the one above it must be free on both hosts." in shown
        assert "obtain similar behaviour by setting ClientAliveCountMax and ServerAliveInterval in /etc/ssh" in shown
        # a paragraph that ends on a colon, the code it introduces, and the title keep their lines
        assert "to the end of the file\n/etc/rc.local:" in shown
        assert '"ServerAliveInterval 60" \\\n        -L 8080' in shown
        assert "autossh for Debian README\n=====" in shown
    finally:
        server.close()


def test_a_headings_permalink_mark_is_not_shown(page: Any, tmp_path: Path) -> None:
    """A new user's trial: an MkDocs page's headings showed their permalink ("Summary¶") in the document's pane."""
    from fixtures import write_files

    html = ('<html><head><title>Table of Contents - Python-Markdown</title></head><body><div role="main">'
            '<h1 id="toc">Table of Contents<a class="headerlink" href="#toc">\u00b6</a></h1>'
            '<h2 id="summary">Summary<a class="headerlink" href="#summary">\u00b6</a></h2>'
            '<p>The Table of Contents extension generates a table of contents from the headings of a document and '
            'adds it to the output.</p><p>It also gives every heading an id attribute that other pages can link '
            'to.</p></div></body></html>')
    server, _ = _served_files(tmp_path, write_files(tmp_path / "docs", {"toc.html": html}))
    try:
        shown = _first_citation_opened(page, server, "What does the Table of Contents extension generate?")
        assert "Summary" in shown and "\u00b6" not in shown, shown
    finally:
        server.close()
