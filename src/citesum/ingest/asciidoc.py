"""AsciiDoc as the page it renders to, by way of Markdown: its structure rewritten line by line into the
CommonMark that :func:`citesum.ingest.formats.read_markdown` renders, so an AsciiDoc manual is read as its
Markdown and HTML peers are (headings, code, lists), not as raw markup ("= rdiff-backup: {page-name}",
":toc: macro", "toc::[]", "https://...[Putty]").

No AsciiDoc renderer on the package registry is both maintained and under a licence the core install can take
(the reference ``asciidoc`` is GPL), so this reads what a document's text needs and drops the rest:

* the header's attribute entries (``:name: value``) are left out and their values put where the text writes
  ``{name}``, with AsciiDoc's built-in character attributes (``{nbsp}``, ``{plus}``, ...);
* ``= Title`` is the title, ``==`` to ``======`` its sections; a block title (``.Title``) heads its block;
* listing (``----``), literal (``....``), passthrough (``++++``) and source blocks are code, as is a literal
  paragraph (each line indented); a table (``|===``) is a block of its rows, kept as written;
* comments (``//`` and ``////`` blocks), block attribute lines (``[source,bash]``, ``[[anchor]]``), block macros
  (``toc::[]``, ``image::x.png[]``, ``include::...[]``) and thematic breaks are left out; the delimiters of
  example, sidebar, quote and open blocks go, their content stays;
* ``*``/``-`` and ``.`` lists become Markdown's, nested by the marker's length; a list continuation (``+``)
  keeps the next block in its item; a description list's ``term::`` leads its item;
* inline: a link or cross reference is its text (``link:url[text]``, ``https://x[text]``, ``<<id,text>>``),
  ``kbd:[Ctrl+P]`` and ``+text+`` their text, a footnote its text in brackets, a line's trailing ``+`` (a
  hard break) goes; ``<`` and ``&`` outside code are escaped so Markdown keeps them as text.

Read line by line, in linear time on any input.
"""

from __future__ import annotations

import re

#: AsciiDoc's character replacement attributes, as the rendered page shows them
_BUILT_IN = {"nbsp": " ", "sp": " ", "empty": "", "zwsp": "", "plus": "+", "amp": "&", "lt": "<", "gt": ">",
             "quot": '"', "apos": "'", "deg": "°", "startsb": "[", "endsb": "]", "vbar": "|", "caret": "^",
             "asterisk": "*", "tilde": "~", "backslash": "\\", "backtick": "`", "two-colons": "::",
             "two-semicolons": ";;", "cpp": "C++", "pp": "++", "brvbar": "¦", "ldquo": "“", "rdquo": "”",
             "lsquo": "‘", "rsquo": "’", "wj": ""}
_ATTRIBUTE_ENTRY = re.compile(r":(!?)([\w][\w-]*)(!?):(?:[ \t]+(.*))?$")
_ATTRIBUTE_REFERENCE = re.compile(r"\{([\w][\w-]*)\}")
_SECTION = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
#: a delimited block's fence: four or more of one character alone on its line
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|\+{4,}|/{4,}|={4,}|\*{4,}|_{4,})[ \t]*$")
_CODE_DELIMITERS = frozenset("-.+")
_TABLE = re.compile(r"[|!,:]={3,}[ \t]*$")
_BLOCK_ATTRIBUTES = re.compile(r"\[[^\]]*\][ \t]*$")
_BLOCK_MACRO = re.compile(r"[\w-]+::\S*\[.*\][ \t]*$")
_BLOCK_TITLE = re.compile(r"\.([^.\s].*)$")
_THEMATIC_BREAK = re.compile(r"(?:'{3,}|<{3,})[ \t]*$")
_ITEM = re.compile(r"[ \t]*(\*{1,5}|-|\.{1,5})[ \t]+(\S.*)$")
_NUMBERED_ITEM = re.compile(r"[ \t]*\d{1,3}\.[ \t]+(\S.*)$")
_DESCRIPTION = re.compile(r"[ \t]*(\S.*?)(:{2,4}|;;)(?:[ \t]+(\S.*))?$")
_ADMONITION = re.compile(r"(NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+")
#: inline forms. Each pattern stops at the next bracket or angle bracket, so a line is read in linear time
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
#: what ends the run of characters a bracket pair's target is, looking back from it
_TARGET_ENDS = frozenset(" \t\n[]()<>")
_MACRO = re.compile(r"(link|mailto|xref|kbd|btn|menu|pass|footnote|footnoteref|image|icon|anchor):(.*)$")
_URL = re.compile(r"(?:https?|ftp|file|irc)://\S+$")
_CROSS_REFERENCE = re.compile(r"<<([^<>,]+)(?:,[ \t]*([^<>]+))?>>")
_ANCHOR = re.compile(r"\[\[[^\[\]]*\]\]|\[#[^\[\]]*\]")
_PASSTHROUGH = re.compile(r"(?<![\w+])\+\+?(\S(?:[^+\n]*?\S)?)\+\+?(?![\w+])")
_CODE_SPAN = re.compile(r"(`{1,3})(.+?)\1")
_WRAPPED_IN_PLUS = re.compile(r"\+[^+].*[^+]\+|\+[^+]\+")


def asciidoc_markdown(source: str) -> tuple[str, str]:
    """(title, Markdown) of an AsciiDoc text: its ``= Title`` (or "" without one, attribute references
    resolved) and its body as CommonMark (see the module docstring)."""
    attributes = dict(_BUILT_IN)
    out: list[str] = []
    title = ""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    _read_header(lines, attributes)
    fence: str | None = None  # the delimiter of the block we are in, when its lines are kept as written
    fence_is_code = False
    comment: str | None = None
    literal = False  # in a literal paragraph (its lines indented)
    table = False
    for raw in lines:
        line = raw.rstrip()
        if comment is not None:
            if line == comment:
                comment = None
            continue
        if fence is not None:
            if line == fence:
                out.append("```" if fence_is_code else "")
                fence = None
            else:
                out.append(raw)
            continue
        if table:
            if _TABLE.match(line):
                out.append("```")
                table = False
            else:
                out.append(raw)
            continue
        if literal and (not line or not raw[:1].isspace()):
            out.append("```")
            literal = False
        if line.startswith("//") and not line.startswith("///"):
            continue
        entry = _ATTRIBUTE_ENTRY.match(line)
        if entry and (not out or not out[-1].strip()):  # an entry stands between blocks
            name, value = entry.group(2), entry.group(4) or ""
            if entry.group(1) or entry.group(3):
                attributes.pop(name, None)
            else:
                attributes[name] = _resolve(value, attributes)
            continue
        if not line:
            out.append("")
            continue
        delimiter = _DELIMITER.match(line)
        if delimiter:
            mark = delimiter.group(1)
            if mark[0] == "/":
                comment = line
            elif mark[0] in _CODE_DELIMITERS:
                fence, fence_is_code = line, True
                out.append("```")
            # an example, sidebar, quote or open block: its content is read as the text around it
            continue
        if line == "--":
            continue
        if _TABLE.match(line):
            table = True
            out.append("```")
            continue
        if _BLOCK_ATTRIBUTES.fullmatch(line) or _BLOCK_MACRO.fullmatch(line) or _THEMATIC_BREAK.fullmatch(line):
            continue
        if literal:
            out.append(raw)
            continue
        if raw[:1].isspace() and (not out or not out[-1].strip()):
            literal = True
            out.extend(["```", raw])
            continue
        section = _SECTION.match(line)
        if section and (section.group(1)[0] == "=" or line.startswith("#")):
            text = _inline(section.group(2), attributes)
            if len(section.group(1)) == 1 and not title:
                title = text
            out.extend(["", f"{'#' * len(section.group(1))} {text}", ""])
            continue
        block_title = _BLOCK_TITLE.fullmatch(line)
        if block_title and (not out or not out[-1].strip()):
            out.extend([f"###### {_inline(block_title.group(1), attributes)}", ""])
            continue
        if line == "+":  # a list continuation: the next block stays in the item
            out.append("")
            continue
        out.append(_block_line(line, attributes))
    if fence is not None and fence_is_code or table or literal:
        out.append("```")
    return title, "\n".join(out).strip() + "\n"


def _read_header(lines: list[str], attributes: dict[str, str]) -> None:
    """The attribute entries of the document's header (the lines below its ``= Title`` down to the first blank
    line), so the title and everything after it can name them ("= rdiff-backup: {page-name}")."""
    number = 0
    while number < len(lines) and (not lines[number].strip() or lines[number].startswith("//")):
        number += 1
    if number == len(lines) or not re.match(r"=[ \t]+\S", lines[number]):
        return
    for line in lines[number + 1:]:
        if not line.strip():
            return
        entry = _ATTRIBUTE_ENTRY.match(line.rstrip())
        if entry and not (entry.group(1) or entry.group(3)):
            attributes[entry.group(2)] = _resolve(entry.group(4) or "", attributes)


def _block_line(line: str, attributes: dict[str, str]) -> str:
    """One line of a paragraph or a list, as Markdown."""
    item = _ITEM.match(line)
    if item:
        depth = len(item.group(1)) - 1 if item.group(1) != "-" else 0
        marker = "1." if item.group(1)[0] == "." else "-"
        return f"{'   ' * depth}{marker} {_inline(item.group(2), attributes)}"
    numbered = _NUMBERED_ITEM.match(line)
    if numbered:
        return f"1. {_inline(numbered.group(1), attributes)}"
    description = _DESCRIPTION.fullmatch(line)
    if description and not re.search(r"\w+://\S*$", description.group(1)):
        term = _inline(description.group(1), attributes)
        return f"- {term}: {_inline(description.group(3) or '', attributes)}".rstrip(": ") + (
            "" if description.group(3) else ":")
    admonition = _ADMONITION.match(line)
    if admonition:
        return f"{admonition.group(1).capitalize()}: {_inline(line[admonition.end():], attributes)}"
    return _inline(line, attributes)


def _resolve(text: str, attributes: dict[str, str]) -> str:
    return _ATTRIBUTE_REFERENCE.sub(lambda m: attributes.get(m.group(1), m.group(0)), text)


def _inline(text: str, attributes: dict[str, str]) -> str:
    """A line's inline markup as the page shows it, escaped for Markdown outside code spans."""
    pieces = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        pieces.append(_inline_prose(text[last:span.start()], attributes))
        # `+*.war+`: a passthrough inside a code span is the span's literal text
        literal = span.group(2)
        pieces.append(f"{span.group(1)}{literal[1:-1] if _WRAPPED_IN_PLUS.fullmatch(literal) else literal}"
                      f"{span.group(1)}")
        last = span.end()
    pieces.append(_inline_prose(text[last:], attributes))
    return "".join(pieces)


def _inline_prose(text: str, attributes: dict[str, str]) -> str:
    text = _resolve(text, attributes)
    text = _ANCHOR.sub("", text)
    text = _CROSS_REFERENCE.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _macros(text)
    text = _PASSTHROUGH.sub(r"\1", text)
    stripped = text.rstrip()
    if stripped.endswith(" +") or stripped.endswith("\t+"):  # a hard line break
        text = stripped[:-1].rstrip()
    return text.replace("&", "&amp;").replace("<", "&lt;")


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
