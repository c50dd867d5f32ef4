"""A PDF's page as printed: the page drawn, the boxes of a sentence where it is printed (across line breaks, a
hyphenated word, a page break), and what the service says when the file is gone or changed."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from citesum.index.store import Index, IndexSettings
from citesum.ingest import ingest_paths
from citesum.ingest.pdf import FILE_DIGEST, page_png, printed_page
from fixtures import make_pdf_pages

FERRY = [(72, 700, "The harbour report covers the weather in May."),
         (72, 680, "The ferry to Harlow will run every forty"),
         (72, 666, "minutes from the first of May, the council said.")]
PAGES = [[(72, 700, "Page one is about the weather in week one.")], FERRY,
         [(72, 700, "Page three is about the tides.")]]


def _pdf() -> bytes:
    return make_pdf_pages(PAGES)


def test_the_boxes_of_a_sentence_are_where_it_is_printed_across_its_lines() -> None:
    printed = printed_page(_pdf(), 2, "The ferry to Harlow will run every forty minutes from the first of May, "
                                      "the council said.")
    assert printed.page == 2 and printed.pages == 3 and (printed.width, printed.height) == (612, 792)
    assert len(printed.boxes) == 2  # its two printed lines
    for (x0, y0, x1, y1), (x, y, _) in zip(printed.boxes, FERRY[1:]):
        assert abs(x0 - x / 612) < 0.01 and x1 > x0  # it starts where the line starts
        assert y0 < 1 - y / 792 < y1 + 0.01  # the line's baseline is at the box's foot (from the top)


def test_a_sentence_partly_on_the_page_marks_the_part_there_and_nothing_is_invented() -> None:
    # the extracted sentence has a word the page does not (a margin note read into it): its runs are marked
    printed = printed_page(_pdf(), 2, "The ferry to Harlow (see map) will run every forty minutes")
    assert printed.boxes
    assert printed_page(_pdf(), 2, "Nothing of this is printed on that page at all.").boxes == []
    assert printed_page(_pdf(), 2, None).boxes == []


def test_a_page_is_drawn_as_a_png() -> None:
    image = page_png(_pdf(), 1, width=300)
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", image[16:24])
    assert width == 300 and abs(height - 300 * 792 / 612) <= 1  # PDFium rounds up
    idat = image.index(b"IDAT")
    length = struct.unpack(">I", image[idat - 4:idat])[0]
    raw = zlib.decompress(image[idat + 4:idat + 4 + length])
    assert len(raw) == height * (1 + width * 3)  # a filter byte and RGB pixels per row
    from citesum.errors import IngestError

    with pytest.raises(IngestError, match="has 3 page"):
        page_png(_pdf(), 4)


def test_the_service_draws_the_page_of_the_file_it_indexed(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(_pdf())
    (folder / "notes.txt").write_text("The ferry to Harlow is a text here, with no printed page.")
    documents, _ = ingest_paths([folder])
    assert all(FILE_DIGEST in d.metadata for d in documents if d.format == "pdf")
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    with TestClient(create_app(index.path, ServiceConfig(worker_kind="thread")),
                    base_url="http://127.0.0.1:8000") as client:
        found = client.get("/printed/report.pdf", params={"page": 2, "evidence": "The ferry to Harlow will run"})
        assert found.status_code == 200 and found.json()["boxes"] and found.json()["pages"] == 3
        image = client.get("/printed-image/report.pdf", params={"page": 2, "width": 200})
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert client.get("/printed/report.pdf", params={"page": 9}).status_code == 400  # no such page
        assert client.get("/printed/notes.txt", params={"page": 1}).status_code == 404  # text: the text view
        assert client.get("/printed-image/report.pdf", params={"page": 1, "width": 10**6}).status_code == 422
        (folder / "report.pdf").write_bytes(make_pdf_pages([[(72, 700, "Another file now.")]]))
        changed = client.get("/printed/report.pdf", params={"page": 1})
        assert changed.status_code == 404 and "changed since it was indexed" in changed.json()["detail"]
        (folder / "report.pdf").unlink()
        gone = client.get("/printed-image/report.pdf", params={"page": 1})
        assert gone.status_code == 404 and "not where it was indexed" in gone.json()["detail"]
        assert str(tmp_path) not in gone.text  # no server path


def test_a_gzipped_pdf_is_read_and_its_pages_drawn_from_the_file_it_holds(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import gzip

    from fastapi.testclient import TestClient

    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "manual.pdf.gz").write_bytes(gzip.compress(_pdf()))  # as Debian ships its PDF manuals
    documents, _ = ingest_paths([folder])
    [document] = documents
    assert document.format == "pdf" and document.source.endswith("manual.pdf.gz") and "ferry to Harlow" in document.text
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    with TestClient(create_app(index.path, ServiceConfig(worker_kind="thread")),
                    base_url="http://127.0.0.1:8000") as client:
        found = client.get(f"/printed/{document.id}", params={"page": 2, "evidence": "The ferry to Harlow will run"})
        # before: the file was skipped as binary content
        assert found.status_code == 200 and found.json()["boxes"] and found.json()["pages"] == 3, found.text
        (folder / "manual.pdf.gz").write_bytes(b"\x1f\x8b\x08" + b"\x00" * 20)  # no longer inflates
        changed = client.get(f"/printed/{document.id}", params={"page": 1})
        assert changed.status_code == 404 and "changed since it was indexed" in changed.json()["detail"]
