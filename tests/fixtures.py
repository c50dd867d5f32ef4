"""Builders for real files of every supported format, made at test time (we own all test data)."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

_MIB = 1 << 20
#: a zip archive of nothing (its end-of-central-directory record alone)
EMPTY_ZIP = b"PK\x05\x06" + bytes(18)


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


#: a book's pages: two of front matter, then the body; :func:`make_book_with_front_matter` prints them i, ii, 1, 2
BOOK_PAGES = [[(72, 700, "Preface of the harbour report, on its weather and its ferries.")],
              [(72, 700, "Contents of the harbour report, chapter by chapter.")],
              [(72, 700, "The ferry to Harlow will run every forty minutes from the first of May.")],
              [(72, 700, "The tides of May are the highest of the year in the harbour.")]]


def make_book_with_front_matter() -> bytes:
    """A PDF of :data:`BOOK_PAGES` whose front matter is numbered i, ii and its body from 1 (the file's third page
    is printed "1")."""
    return make_pdf_pages(BOOK_PAGES, page_labels="0 << /S /r >> 2 << /S /D >>")


def make_pdf_pages(pages: list[list[tuple[float, float, str]]] | list[list[tuple[float, float, str, float]]],
                   font_size: int = 11, page_labels: str = "", title: str = "") -> bytes:
    """A valid PDF (US Letter, Helvetica) whose pages show each ``(x, y, text)`` at that point, in the given
    order in the content stream (as a writer that fills two columns line by line across the page would), in
    ``font_size`` points, or in the size a fourth item gives (``(x, y, text, size)``).
    ``page_labels``: the catalog's /PageLabels number tree's /Nums array ("0 << /S /r >> 2 << /S /D >>": the
    first two pages numbered i, ii, the rest 1, 2, ... as a book's front matter and body are). ``title``: the
    document information's /Title."""
    fonts = 3 + 2 * len(pages)
    labels = f" /PageLabels << /Nums [{page_labels}] >>" if page_labels else ""
    objects = [f"<< /Type /Catalog /Pages 2 0 R{labels} >>",
               "<< /Type /Pages /Kids [" + " ".join(f"{3 + 2 * n} 0 R" for n in range(len(pages)))
               + f"] /Count {len(pages)} >>"]
    for n, lines in enumerate(pages):
        stream = " ".join(f"BT /F1 {line[3] if len(line) > 3 else font_size:g} Tf {line[0]:g} {line[1]:g} Td "
                          f"{_pdf_string(line[2])} Tj ET" for line in lines)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * n} 0 R "
                       f"/Resources << /Font << /F1 {fonts} 0 R >> >> >>")
        objects.append(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    if title:
        objects.append(f"<< /Title {_pdf_string(title)} >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    info = f" /Info {len(objects)} 0 R" if title else ""
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def make_pdf(text_lines: list[str]) -> bytes:
    """A minimal, valid one-page PDF whose page shows ``text_lines`` in Helvetica, one under the other."""
    return make_pdf_pages([[(72, 720 - 14 * n, line) for n, line in enumerate(text_lines)]], font_size=12)


def make_encrypted_pdf(text_lines: list[str], password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf(text_lines))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(path: Path, paragraphs: list[str], table: list[list[str]] | None = None) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Test report"
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    document.save(path)


_WORD_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def make_docx_with_notes(path: Path, body: list[str | list[list[str]]], footnotes: list[str],
                         header: str = "", footer: str = "") -> None:
    """A .docx whose body has paragraphs (str) and tables (rows of cells) in the given order, a running header
    and footer, and footnotes (python-docx writes no footnotes: their part is added to the package here, as
    Word stores them, separators with ids -1 and 0 included)."""
    import docx

    document = docx.Document()
    for block in body:
        if isinstance(block, str):
            document.add_paragraph(block)
        else:
            grid = document.add_table(rows=len(block), cols=len(block[0]))
            for r, row in enumerate(block):
                for c, value in enumerate(row):
                    grid.cell(r, c).text = value
    if header:
        document.sections[0].header.paragraphs[0].text = header
    if footer:
        document.sections[0].footer.paragraphs[0].text = footer
    document.save(path)
    notes = "".join(f'<w:footnote w:id="{n}"><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:footnote>'
                    for n, text in enumerate(footnotes, start=1))
    part = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="{_WORD_NS}">'
            '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
            '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
            f'</w:footnote>{notes}</w:footnotes>')
    with zipfile.ZipFile(path) as source:
        members = {name: source.read(name) for name in source.namelist()}
    members["word/footnotes.xml"] = part.encode()
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(
        b"</Types>", b'<Override PartName="/word/footnotes.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>')
    members["word/_rels/document.xml.rels"] = members["word/_rels/document.xml.rels"].replace(
        b"</Relationships>", b'<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/'
        b'officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/></Relationships>')
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def with_part_inflating_to(package: bytes, part: str, size: int) -> bytes:
    """``package`` with ``part`` (added or replaced) inflating to ``size`` bytes of zeros, written a MiB at a
    time."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != part:
                target.writestr(info, source.read(info))
        with target.open(part, "w") as member:
            for _ in range(size // _MIB):
                member.write(b"\x00" * _MIB)
    return out.getvalue()


def declaring_sizes(archive: bytes, part: str, size: int, crc: int) -> bytes:
    """``archive`` whose local and central headers of ``part`` declare ``size`` bytes with CRC-32 ``crc``
    (zipfile always writes the true ones, so they are patched afterwards)."""
    patched = bytearray(archive)
    with zipfile.ZipFile(io.BytesIO(archive)) as reader:
        local = reader.getinfo(part).header_offset
    struct.pack_into("<I", patched, local + 14, crc)  # local header: CRC-32 at 14, uncompressed size at 22
    struct.pack_into("<I", patched, local + 22, size)
    entry = struct.unpack_from("<I", patched, patched.rfind(b"PK\x05\x06") + 16)[0]  # the central directory
    while patched[entry:entry + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", patched, entry + 28)
        if patched[entry + 46:entry + 46 + name_length] == part.encode():
            struct.pack_into("<I", patched, entry + 16, crc)  # central entry: CRC-32 at 16, size at 24
            struct.pack_into("<I", patched, entry + 24, size)
        entry += 46 + name_length + extra_length + comment_length
    with zipfile.ZipFile(io.BytesIO(bytes(patched))) as reader:
        assert reader.getinfo(part).file_size == size  # the lie is what zipfile (and so every parser) reads
    return bytes(patched)


def make_zip_bomb(path: Path, inflated_bytes: int) -> None:
    """A .docx-named zip whose single member inflates to ``inflated_bytes`` of zeros."""
    path.write_bytes(with_part_inflating_to(EMPTY_ZIP, "word/document.xml", inflated_bytes))


def make_xlsx(path: Path, header: list[str], rows: list[list[object]]) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Sales"
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    workbook.save(path)


#: a topic per subtopic of the demo haystack, named by its facts: the offline summarizer writes every fact of a
#: topic it finds (a question gets only what answers it), so its summary grows with the context, as the budget
#: estimate needs to tell budgets apart
DEMO_TOPICS = {"water": "The reservoir, leaking pipes, the desalination plant and household water rates",
               "transit": "The Eastline tram, student bus fares, electric buses and the drivers' strike",
               "housing": "Median rents, building permits for new homes, rental vacancy and the zoning reform"}


def write_demo_queries(path: Path) -> Path:
    """The demo haystack's topics (:data:`DEMO_TOPICS`), one a line (what estimate-budget reads)."""
    path.write_text("\n".join(DEMO_TOPICS.values()) + "\n\n")
    return path


def fact_stating_panel(requests: list[dict]):  # type: ignore[no-untyped-def]
    """A loopback server script for a panel that answers each prompt with the facts of the demo topic it asks
    about (the silver references a capable panel would write); records every request in ``requests``."""
    from loopback import answer

    from citesum.demo.haystack import SUBTOPICS

    facts = {DEMO_TOPICS[subtopic]: " ".join(p[0] for _, p in items) for subtopic, (_, items) in SUBTOPICS.items()}

    def panel(handler, request: dict, n: int) -> None:  # type: ignore[no-untyped-def]
        requests.append(request)
        prompt = request["messages"][-1]["content"]
        answer(handler, next(text for query, text in facts.items() if f"Question: {query}" in prompt))

    return panel


def overwrite(path: Path, data: bytes) -> None:
    """Write ``data`` over the file at ``path`` in place, as damage done later would be: its modification time
    moves on a second even where the file system's clock ticks coarser than a test runs (a write in the same tick
    as the file's own would keep its time, and a load trusts a file whose time and inode are those recorded;
    ``citesum check`` reads it anyway)."""
    import os

    before = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))


#: short notes of a city, one subject each: a corpus for commands run as a user runs them
CITY_NOTES = {
    "water.txt": "The Lakemont reservoir fell to 41 percent of capacity in August. Residents were asked to save "
                 "water, and the city limited lawn watering to two days a week.",
    "transit.txt": "Bus drivers went on strike in May over pay. The transit authority added night trains on the "
                   "east line while the buses stood still.",
    "rent.txt": "The median rent of a two-bedroom flat rose nine percent this year, the housing office reported.",
    "school.txt": "The school board cut the music budget and hired four maths teachers for the autumn term.",
    "harbour.txt": "The harbour ferry timetable changes in June: boats leave every twenty minutes at rush hour.",
    "library.txt": "The central library opens on Sundays from next month, with longer hours during exams.",
    "parks.txt": "Two new parks open along the river, with a playground and a path for bicycles.",
    "power.txt": "A storm cut power to nine thousand homes; the utility restored most lines within a day.",
}


def write_files(folder: Path, files: dict[str, str]) -> Path:
    """``folder``, made, holding ``files`` (name -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return folder


#: a README.Debian whose sentence introduces a listing with a blank line inside it (as chrony's does)
CLOCKD_README = ("Notes about the Debian packaging of the clock daemon.\n\n"
                 " - The daemon keeps its settings in the /etc/clockd directory, which the package creates for you.\n"
                 "   It is filled by two important files:\n"
                 "        -> clockd.conf (the daemon's settings, see clockd.conf(5)\n"
                 "          for the directives)\n\n"
                 "        -> clockd.keys (the keys used to sign the packets, see\n"
                 "          the keyfile directive)\n\n"
                 " - We also provide hooks that take the daemon online when the link comes up.\n")


#: a plain-text FAQ whose entries "Q:" and "A:" label, set as gpm's is: hard-wrapped questions, some stating the
#: asker's case before they ask, answers after a blank line, one opening in lower case
MOUSE_FAQ = ("Frequently asked questions about the console mouse daemon\n\n"
             "Q: My serial mouse works in X, but behaves erratically on the text\n"
             "   console, and I get involuntary pastes.\n\n"
             "A: Many serial mice repeat events to signal a change in the middle\n"
             "   button. Try the bare protocol, which ignores the repeated events.\n\n"
             "---------------------------------------------------------------------------\n"
             "Q: I have a serial mouse. It works fine except that when I drag it with\n"
             "   the middle button pressed, the daemon assumes that the button has been\n"
             "   released. Dragging with the other buttons works just fine.\n\n"
             "A: You are probably running the mouse in the plain protocol. In this mode\n"
             "   dragging with the middle button is disabled on purpose.\n\n"
             "   Try using the extended protocol instead.\n\n"
             "---------------------------------------------------------------------------\n"
             "Q: I run the plain protocol, and I get a double paste when I press the\n"
             "   middle button. Is there any workaround?\n\n"
             "A: Try the three-button protocol instead.\n\n"
             "---------------------------------------------------------------------------\n"
             "Q: mouse.conf is not accepted, but the daemon works from the command line.\n\n"
             "A: mouse.conf is not read by the daemon itself. Please ask your distribution.\n")
