"""AsciiDoc as the page it renders to, by way of Markdown: its structure rewritten line by line into the
CommonMark that :func:`citesum.ingest.formats.read_markdown` renders, so an AsciiDoc manual is read as its
Markdown and HTML peers are (headings, code, lists), not as raw markup ("= rdiff-backup: {page-name}",
":toc: macro", "toc::[]", "https://...[Putty]").

No AsciiDoc renderer on the package registry is both maintained and under a licence the core install can take
(the reference ``asciidoc`` is GPL), so this reads what a document's text needs and drops the rest:

* the header (author and revision lines, attribute entries) is left out, and attribute values are put where
  the text writes ``{name}``, with AsciiDoc's built-in character attributes (``{nbsp}``, ``{plus}``, ...),
  within a few times the text's length;
* ``= Title`` is the title (as plain text), ``==`` to ``======`` its sections, as is a line underlined to its
  length (``NAME`` over ``----``); a block title (``.Title``) heads its block;
* listing (``----``), literal (``....``) and passthrough (``++++``) blocks are code, as is a literal paragraph
  (its lines indented) and one below ``[source]``; a table (``|===``) is a block of its rows, kept as written;
  a block of code is fenced by more backticks than it holds;
* comments (``//`` and ``////`` blocks), block attribute lines (``[source,bash]``, ``[[anchor]]``), block macros
  (``toc::[]``, ``image::x.png[]``, ``include::...[]``) and thematic breaks are left out; the delimiters of
  example, sidebar, quote and open blocks go, their content stays;
* ``*``/``-`` and ``.`` lists become Markdown's, nested by the marker's length, where a block starts (a
  marker inside a paragraph is prose, and escaped so Markdown keeps it so); a list continuation (``+``)
  keeps the next block in its item; a description list's ``term::`` leads its item;
* inline: a link or cross reference is its text (``link:url[text]``, ``https://x[text]``, ``<<id,text>>``),
  ``kbd:[Ctrl+P]`` and ``+text+`` their text, a footnote its text in brackets, a line's trailing ``+`` (a
  hard break) goes; ``<`` and ``&`` outside code are escaped so Markdown keeps them as text.

Read line by line, in linear time on any input.
"""

from __future__ import annotations

import html
import re

#: AsciiDoc's character replacement attributes, as the rendered page shows them
_BUILT_IN = {"nbsp": " ", "sp": " ", "empty": "", "zwsp": "", "plus": "+", "amp": "&", "lt": "<", "gt": ">",
             "quot": '"', "apos": "'", "deg": "°", "startsb": "[", "endsb": "]", "vbar": "|", "caret": "^",
             "asterisk": "*", "tilde": "~", "backslash": "\\", "backtick": "`", "two-colons": "::",
             "two-semicolons": ";;", "cpp": "C++", "pp": "++", "brvbar": "¦", "ldquo": "“", "rdquo": "”",
             "lsquo": "‘", "rsquo": "’", "wj": ""}
_ATTRIBUTE_ENTRY = re.compile(r":(!?)([\w][\w-]*)(!?):(?:[ \t]+(.*))?$")
_ATTRIBUTE_REFERENCE = re.compile(r"\{([\w][\w-]*)\}")
_SECTION = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*)$")
#: a delimited block's fence: four or more of one character alone on its line (an open block's "--")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|\+{4,}|/{4,}|={4,}|\*{4,}|_{4,}|--)[ \t]*$")
_CODE_DELIMITERS = frozenset("-.+")
_TABLE = re.compile(r"[|!,:]={3,}[ \t]*$")
_BLOCK_ATTRIBUTES = re.compile(r"\[[^\]]*\][ \t]*$")
#: a block style that makes the paragraph below it code ("[source,bash]", "[literal]")
_CODE_STYLE = re.compile(r"\[(?:source|listing|literal)\b")
_BLOCK_MACRO = re.compile(r"[\w-]+::[^\s\[]*\[.*\][ \t]*$")
#: a preprocessor conditional's line: "ifdef::env-github[]", "ifndef::a,b[]", "ifeval::[{x} < 20]", "endif::[]"
_CONDITIONAL = re.compile(r"(?:(ifdef|ifndef)::([^\s\[]+)\[\]|(ifeval)::\[[^\]\n]*\]|(endif)::[^\s\[]*\[\])[ \t]*$")


def _preprocessed(lines: list[str]) -> list[str]:
    """The lines the preprocessor's conditionals keep, without the conditionals' own lines (they were read as
    text: "... Français | 日本語 endif::[]"). ``ifdef::a[]`` keeps what it holds when the document (or Asciidoctor)
    sets ``a`` by then ("a,b": either; "a+b": both), ``ifndef`` when not; what a renderer sets, such as
    ``env-github`` on GitHub's page, is not set, as when Asciidoctor renders the file itself. An ``ifeval``'s
    expression is not evaluated: what it holds is kept."""
    defined = set(_BUILT_IN)
    kept: list[str] = []
    conditions: list[bool] = []
    unmet = 0  # the conditions in force that do not hold (a count: a stack of thousands is read in linear time)
    for line in lines:
        conditional = _CONDITIONAL.match(line)
        if conditional is None:
            if unmet:
                continue
            entry = _ATTRIBUTE_ENTRY.match(line)
            if entry:
                (defined.discard if entry.group(1) or entry.group(3) else defined.add)(entry.group(2))
            kept.append(line)
            continue
        kind, names = conditional.group(1) or conditional.group(3) or conditional.group(4), conditional.group(2)
        if kind == "endif":
            if conditions:
                unmet -= not conditions.pop()
            continue
        holds = True
        if names:
            wanted = [name in defined for name in re.split(r"[,+]", names)]
            holds = (all(wanted) if "+" in names else any(wanted)) == (kind == "ifdef")
        conditions.append(holds)
        unmet += not holds
    return kept
_BLOCK_TITLE = re.compile(r"\.([^.\s].*)$")
_THEMATIC_BREAK = re.compile(r"(?:'{3,}|<{3,}|-{3}|\*{3}|- - -|\* \* \*)[ \t]*$")
#: the underline of a two-line section title, by its character's level
_UNDERLINES = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_ITEM = re.compile(r"[ \t]*(\*{1,5}|-|\.{1,5})[ \t]+(\S.*)$")
_NUMBERED_ITEM = re.compile(r"[ \t]*(\d{1,3})\.[ \t]+(\S.*)$")
#: a description list's term (Asciidoctor's rule: it neither starts nor ends with a space, nor ends with ":")
_DESCRIPTION = re.compile(r"[ \t]*([^ \t].*?[^ \t:;]|[^ \t:;])(:{2,4}|;;)(?:[ \t]+(\S.*))?$")
_URL_START = re.compile(r"[a-z][\w+.-]*://", re.IGNORECASE)
#: what a line of prose may open with that Markdown reads as structure, so it is escaped
_MARKDOWN_OPENING = re.compile(r"[ \t]*(?:[-*+](?=[ \t]|$)|#{1,6}(?=[ \t]|$)|>|\[|\d{1,9}[.)](?=[ \t]|$))")
_ADMONITION = re.compile(r"(NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+")
#: inline forms. Each pattern stops at the next bracket or angle bracket, so a line is read in linear time
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
#: what ends the run of characters a bracket pair's target is, looking back from it
_TARGET_ENDS = frozenset(" \t\n[]()<>")
_MACRO = re.compile(r"(link|mailto|xref|kbd|btn|menu|pass|footnote|footnoteref|image|icon|anchor):(.*)$")
_URL = re.compile(r"(?:https?|ftp|file|irc)://\S+$")
_CROSS_REFERENCE = re.compile(r"<<([^<>,]+)(?:,[ \t]*([^<>]+))?>>")
_ANCHOR = re.compile(r"\[\[[A-Za-z_:][\w:.-]*(?:,[^\[\]]*)?\]\]|\[#[A-Za-z_:][\w:.-]*\]")
_PASSTHROUGH = re.compile(r"(?<![\w+])\+\+?(\S(?:[^+\n]*?\S)?)\+\+?(?![\w+])")
_CODE_SPAN = re.compile(r"(`{1,3})(.+?)\1")
#: a character reference, as AsciiDoc passes it to the page, which shows its character ("LTTng&#8209;tools",
#: "&mdash;"): with its semicolon (HTML's older names without one, "&copy", are text: "?a=1&region=eu")
_REFERENCE = r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
_CHARACTER_REFERENCE = re.compile(_REFERENCE)
#: an "&" that opens no character reference
_BARE_AMPERSAND = re.compile(f"&(?!{_REFERENCE[1:]})")
_WRAPPED_IN_PLUS = re.compile(r"\+[^+].*[^+]\+|\+[^+]\+")


def asciidoc_markdown(source: str) -> tuple[str, str]:
    """(title, Markdown) of an AsciiDoc text: its ``= Title`` as plain text (or "" without one) and its body as
    CommonMark (see the module docstring)."""
    return _Converter(source.removeprefix("\ufeff")).convert()


class _Converter:
    """One pass over the lines; a block of code is gathered and fenced when it ends, by a fence longer than
    any run of backticks it holds."""

    def __init__(self, source: str) -> None:
        self.lines = _preprocessed(source.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        self.attributes = dict(_BUILT_IN)
        self.out: list[str] = []
        self.title = ""
        self.code: list[str] | None = None  # the lines of the block of code being read
        self.code_ends = ""  # what closes it: its delimiter, or "" for a paragraph (a blank line)
        self.code_style = False  # a "[source]" line: the next paragraph is code
        self.code_literal = False  # the paragraph of code is a literal one: it ends at a line not indented
        self.in_list = False
        self.after_term = False  # a description list's term stands alone above: its description may be indented

    def convert(self) -> tuple[str, str]:
        lines = self.lines
        number = self._header()
        comment: str | None = None
        while number < len(lines):
            raw = lines[number]
            line = raw.rstrip()
            number += 1
            if comment is not None:
                comment = None if line == comment else comment
                continue
            if self.code is not None:
                if self.code_ends:  # a delimited block: until its delimiter comes again
                    if line == self.code_ends:
                        self._end_code()
                    else:
                        self.code.append(raw)
                    continue
                # a paragraph of code ends at a blank line; a literal one also at a line not indented
                if line and not (self.code_literal and not raw[:1].isspace()):
                    self.code.append(raw)
                    continue
                self._end_code()
            starts = not self.out or not self.out[-1].strip()
            if line.startswith("//") and not line.startswith("///"):
                continue
            if not line:
                self.out.append("")
                self.in_list = False  # (a term's description may still follow, after_term says)
                continue
            delimiter = _DELIMITER.match(line)
            if delimiter or _TABLE.match(line):
                self.after_term = False  # a block stands between a term and what follows
            if delimiter:
                self.code_style = False  # a style above a delimited block is the block's
                mark = delimiter.group(1)
                if mark[0] == "/":
                    comment = line
                elif mark[0] in _CODE_DELIMITERS and mark != "--":
                    self._start_code(line)
                else:  # an example, sidebar, quote or open block: its content is read as the text around it
                    self.out.append("")
                continue
            if _TABLE.match(line):
                self._start_code(line)
                continue
            if _THEMATIC_BREAK.fullmatch(line):
                self.out.append("")
                continue
            if line == "+":  # a list continuation: the next block stays in the item
                self.out.append("")
                continue
            read = self._block_start(raw, line, number, starts) if starts or self.in_list else 0
            if read:
                number += read - 1
                continue
            self.out.append(_block_line(line, self.attributes) if starts
                            else _escaped_opening(_inline(line, self.attributes)))
        if self.code is not None:
            self._end_code()
        return self.title, "\n".join(self.out).strip() + "\n"

    def _header(self) -> int:
        """Read the document's header (its ``= Title``, author and revision lines and attribute entries, down
        to the first blank line); the number of the line after it."""
        number = 0
        while number < len(self.lines) and (not self.lines[number].strip() or self.lines[number].startswith("//")):
            number += 1
        if number == len(self.lines) or not re.match(r"=[ \t]+\S", self.lines[number]):
            return 0
        header_end = number + 1
        while header_end < len(self.lines) and self.lines[header_end].strip():
            entry = _ATTRIBUTE_ENTRY.match(self.lines[header_end].rstrip())
            if entry:
                self._set(entry)
            header_end += 1
        self._heading(1, _without_closing_marks("=", self.lines[number].split(None, 1)[1].strip()))
        return header_end

    def _set(self, entry: re.Match[str]) -> None:
        name, value = entry.group(2), entry.group(4) or ""
        if entry.group(1) or entry.group(3):
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = _resolve(value, self.attributes)

    def _block_start(self, raw: str, line: str, number: int, starts: bool) -> int:
        """Read a line that starts a block (``starts``: after a blank line) or a list's next item: how many
        lines it takes (2 for a title and its underline), 0 when it is a paragraph's first line or goes on
        one."""
        style, self.code_style = self.code_style, False  # a style is the next block's only
        listed = _list_line(line, self.attributes)
        after_term, self.after_term = self.after_term, False
        if listed is not None:
            self.out.append(listed)
            self.in_list = True
            self.after_term = listed.endswith(":") and bool(_DESCRIPTION.fullmatch(line))
            return 1
        if not starts:
            return 0
        entry = _ATTRIBUTE_ENTRY.match(line)
        if entry:
            self._set(entry)
            return 1
        if _BLOCK_ATTRIBUTES.fullmatch(line):
            self.code_style = style or bool(_CODE_STYLE.match(line))
            return 1
        if _BLOCK_MACRO.fullmatch(line):
            return 1
        section = _SECTION.match(line)
        if section and (section.group(1)[0] == "=" or line.startswith("#")):
            marks = section.group(1)
            self._heading(len(marks), _without_closing_marks(marks, section.group(2).rstrip()))
            return 1
        if self._underlined(line, number):
            self._heading(_UNDERLINES[self.lines[number].strip()[0]], line.strip())
            return 2
        block_title = _BLOCK_TITLE.fullmatch(line)
        if block_title:
            self.out.extend([f"###### {_inline(block_title.group(1), self.attributes)}", ""])
            return 1
        if after_term and raw[:1].isspace() and not style:
            # a description list's term alone on its line: the indented paragraph below is its description
            self.out.append(_block_line(line.strip(), self.attributes))
            return 1
        if style or raw[:1].isspace():  # "[source]" above it, or its lines indented: a literal
            self._start_code("")
            self.code_literal = not style
            self.code.append(raw)  # type: ignore[union-attr]
            return 1
        return 0

    def _heading(self, level: int, text: str) -> None:
        if level == 1 and not self.title:
            self.title = _plain(text, self.attributes)
        self.out.extend(["", f"{'#' * level} {_inline(text, self.attributes)}", ""])

    def _underlined(self, line: str, number: int) -> bool:
        """Whether ``line`` is a two-line section title: the next line one of ``= - ~ ^ +`` repeated to within
        a character of its length."""
        if number >= len(self.lines) or not line.strip() or line[:1].isspace():
            return False
        under = self.lines[number].rstrip()
        return (len(under) >= 2 and under[0] in _UNDERLINES and under == under[0] * len(under)
                and abs(len(under) - len(line)) <= 1 and any(c.isalnum() for c in line))

    def _start_code(self, delimiter: str) -> None:
        self.code, self.code_ends, self.code_literal = [], delimiter, False

    def _end_code(self) -> None:
        lines = self.code or []
        longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, longest + 1)
        self.out.extend([fence, *lines, fence, ""])
        self.code = None
        self.in_list = False


def _list_line(line: str, attributes: dict[str, str]) -> str | None:
    """A list's item or a description list's entry, as Markdown; None for any other line."""
    item = _ITEM.match(line)
    if item:
        depth = len(item.group(1)) - 1 if item.group(1) != "-" else 0
        marker = "1." if item.group(1)[0] == "." else "-"
        return f"{'   ' * depth}{marker} {_inline(item.group(2), attributes)}"
    numbered = _NUMBERED_ITEM.match(line)
    if numbered:
        return f"{numbered.group(1)}. {_inline(numbered.group(2), attributes)}"
    description = _DESCRIPTION.fullmatch(line)
    if description and not _URL_START.match(description.group(1)):
        term = _inline(description.group(1), attributes)
        return f"- {term}: {_inline(description.group(3), attributes)}" if description.group(3) else f"- {term}:"
    return None


def _block_line(line: str, attributes: dict[str, str]) -> str:
    """A paragraph's first line, as Markdown: an admonition's label as a word ("Note: ...")."""
    admonition = _ADMONITION.match(line)
    if admonition:
        return f"{admonition.group(1).capitalize()}: {_inline(line[admonition.end():], attributes)}"
    return _escaped_opening(_inline(line, attributes))


def _escaped_opening(markdown: str) -> str:
    """A line of prose that opens as Markdown's structure does ("- not per group", "2. It ...", "[1]: url")
    with that opening escaped, so Markdown keeps it as prose."""
    opening = _MARKDOWN_OPENING.match(markdown)
    if opening is None:
        return markdown
    cut = opening.end() - 1
    return f"{markdown[:cut]}\\{markdown[cut:]}"


def _resolve(text: str, attributes: dict[str, str]) -> str:
    """``text`` with its attribute references replaced by their values; past a few times the text's length
    (values that name values, ten deep, grow a line a billionfold), the references left are kept as written."""
    budget = 4 * len(text) + 4096
    pieces = []
    last = 0
    for reference in _ATTRIBUTE_REFERENCE.finditer(text):
        value = attributes.get(reference.group(1))
        if value is None or len(value) > budget:
            continue
        budget -= len(value)
        pieces.append(text[last:reference.start()])
        pieces.append(value)
        last = reference.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _inline(text: str, attributes: dict[str, str]) -> str:
    """A line's inline markup as the page shows it, escaped for Markdown outside code spans."""
    text = _macros(_resolve(text, attributes))  # a link's text may hold a code span
    pieces = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        pieces.append(_inline_prose(text[last:span.start()]))
        # `+*.war+`: a passthrough inside a code span is the span's literal text; in another, a character
        # reference is its character (`{nbh}{nbh}help`, "&#8209;" for a hyphen no line breaks at)
        literal = span.group(2)
        literal = literal[1:-1] if _WRAPPED_IN_PLUS.fullmatch(literal) else _decoded(literal)
        pieces.append(f"{span.group(1)}{literal}{span.group(1)}")
        last = span.end()
    pieces.append(_inline_prose(text[last:]))
    return "".join(pieces)


def _inline_prose(text: str) -> str:
    text = _ANCHOR.sub("", text)
    text = _CROSS_REFERENCE.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _PASSTHROUGH.sub(r"\1", text)
    stripped = text.rstrip()
    if stripped.endswith(" +") or stripped.endswith("\t+"):  # a hard line break
        text = stripped[:-1].rstrip()
    return _BARE_AMPERSAND.sub("&amp;", text).replace("<", "&lt;")


def _decoded(text: str) -> str:
    """``text`` with its character references as their characters (where Markdown would not decode them: a
    title read as plain text, a code span)."""
    return _CHARACTER_REFERENCE.sub(lambda reference: html.unescape(reference.group()), text)


def _without_closing_marks(marks: str, text: str) -> str:
    """A section title's text without the marks that close it in AsciiDoc's symmetric form ("== Title ==", and
    the document's "= NTPsec project news =")."""
    return text[: -len(marks)].rstrip() if text.endswith(f" {marks}") else text


def _plain(text: str, attributes: dict[str, str]) -> str:
    """A title as plain text: its inline markup as the page shows it, without Markdown's escapes or code
    marks."""
    text = _macros(_resolve(text, attributes))
    text = _CROSS_REFERENCE.sub(lambda m: (m.group(2) or m.group(1)).strip(), _ANCHOR.sub("", text))
    return " ".join(_decoded(_PASSTHROUGH.sub(r"\1", text).replace("`", "")).split())


def _macros(text: str) -> str:
    """Inline macros and URLs with their text in brackets (``link:url[text]``, ``https://x[text]``,
    ``kbd:[Ctrl+P]``, ``footnote:[...]``) as the page shows them; any other ``word[...]`` as written. Each bracket
    pair's target is the run of characters before it, back to the last space or bracket."""
    pieces = []
    last = 0
    for brackets in _BRACKETS.finditer(text):
        start = brackets.start()
        while start > last and text[start - 1] not in _TARGET_ENDS:
            start -= 1
        shown = _shown(text[start:brackets.start()], brackets.group(1))
        if shown is None:
            continue
        pieces.append(text[last:start])
        pieces.append(shown)
        last = brackets.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _shown(target: str, text: str) -> str | None:
    """What the page shows for ``target[text]``, or None when it is no macro or link."""
    macro = _MACRO.search(target)
    if macro is None:
        if _URL.match(target) is None:
            return None
        return _link_text(text) or target
    name, argument = macro.group(1), macro.group(2)
    prefix = target[:macro.start()]
    if name == "footnote":
        return f"{prefix} ({text})" if text else prefix
    if name in ("image", "icon", "anchor", "footnoteref"):
        return prefix
    if name in ("kbd", "btn", "pass"):
        return prefix + text
    if name == "menu":
        return prefix + " > ".join([argument, *[part.strip() for part in text.split(">") if part.strip()]])
    return prefix + (_link_text(text) or argument)


def _link_text(text: str) -> str:
    """A link's text: its first attribute, without a role or the "^" that opens it in a new window."""
    return text.split(",")[0].strip().strip('"').removesuffix("^")
