"""reStructuredText as the page it renders to: docutils (the reference parser) writes it as HTML, which
:func:`citesum.ingest.formats.read_rst` reads as it reads a web page's text, so headings, code blocks and lists
are what they are, not raw markup (".. _faq:", "`text <url>`_", ":meth:`Session.get`").

Most .rst files in the wild are written for Sphinx, whose roles and directives docutils does not know. An
unknown role shows its text (``:ref:`the guide <guide>``` is "the guide", ``:meth:`~a.Session.get``` is
``get``); an unknown directive keeps the prose it holds (``versionadded``, ``seealso``, ``only``), shows its code
as code (``code-block``, ``sourcecode``) and leaves out what only builds pages (``toctree``, ``autoclass``,
``literalinclude``, ``index``). Nothing is read from disk (``include``, ``raw`` and file-reading directives are
off; an image is never embedded, a figure keeps only its caption) and docutils' own messages about the markup
are not text.
"""

from __future__ import annotations

import contextlib
import functools
import html
import io
import re
import threading
from typing import Any, Iterator

#: directives that only build pages (a table of contents, API pages drawn from code, a file's inclusion)
_LEFT_OUT = re.compile(r"(?:toctree|index|highlight|literalinclude|include|auto\w*|\w+:auto\w*|py:module|"
                       r"testsetup|testcleanup|currentmodule|module|tabularcolumns|graphviz|image|figure|plot|raw|"
                       r"program)$")
#: directives whose body is code
_CODE = frozenset({"code-block", "sourcecode", "code", "doctest", "testcode", "testoutput", "prompt", "console"})
#: a role's text with its target: "the guide <guide>"
_WITH_TARGET = re.compile(r"(.*?)\s*<[^<>]*>\s*$", re.DOTALL)
#: Sphinx's notes on a version, as it words them
_VERSION_LABELS = {"versionadded": "New in version {}", "versionchanged": "Changed in version {}",
                   "deprecated": "Deprecated since version {}", "versionremoved": "Removed in version {}",
                   "seealso": "See also"}
#: directives whose arguments are a build's condition or an author, not text ("only:: html")
_UNSHOWN_ARGUMENTS = frozenset({"only", "ifconfig", "sectionauthor", "codeauthor", "moduleauthor", "container",
                                "rst-class", "cssclass"})
#: Sphinx's file-wide metadata, a field list before the title (":orphan:", ":tocdepth: 2")
_METADATA = re.compile(r"\A(?:[ \t]*\n)*(?::(?:orphan|tocdepth|nocomments|nosearch|no-search|title)"
                       r":[^\n]*\n(?:[ \t]*\n)*)+")
#: roles that show their text as written ("git checkout <branch>"): no target or "~" path to strip
_VERBATIM_ROLES = frozenset({"samp", "kbd", "file", "command", "guilabel", "menuselection", "abbr", "dfn",
                             "program", "regexp", "math", "makevar", "mailheader", "mimetype", "newsgroup"})
_lock = threading.Lock()


def rst_html(source: str) -> tuple[str, str]:
    """(title, HTML body) of a reStructuredText text, rendered by docutils with Sphinx's roles and
    directives read as the module docstring says."""
    from docutils.core import publish_parts

    with _sphinx_tolerated():
        parts = publish_parts(_METADATA.sub("", source), writer="html5", settings_overrides={
            "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
            "raw_enabled": False, "syntax_highlight": "none", "_disable_config": True, "embed_stylesheet": False,
            "image_loading": "link", "input_encoding": "unicode", "output_encoding": "unicode",
            "traceback": True})
    return _title_text(parts["title"]), parts["html_body"]


def _title_text(title_html: str) -> str:
    """The title docutils writes as HTML ("<span class="docutils literal">json</span> --- JSON"), as text."""
    return " ".join(html.unescape(re.sub(r"<[^<>]*>", "", title_html)).split())


@contextlib.contextmanager
def _sphinx_tolerated() -> Iterator[None]:
    """While one text is rendered, docutils reads an unknown role or directive as the module docstring says,
    instead of reporting it and dropping its text, and an image is never read from disk (docutils embeds one
    whose ``:loading:`` asks, whatever ``file_insertion_enabled`` says). Other users of docutils in the process
    see it as it was before and after."""
    from docutils.parsers.rst import directives, roles

    with _lock:
        known_role, known_directive = roles.role, directives.directive
        left_out, code_block, prose = _make_directives()

        def role(name: str, language: Any, lineno: int, reporter: Any) -> tuple[Any, list[Any]]:
            found, messages = known_role(name, language, lineno, reporter)
            return (found, messages) if found is not None else (_shown_role, [])

        def directive(name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
            if name in _CODE:  # docutils' own "code" refuses Sphinx's options (":linenos:") and drops the code
                return code_block, []
            if name in ("image", "figure"):  # an image is no text; a figure's caption and legend are prose
                return (left_out if name == "image" else prose), []
            found, messages = known_directive(name, language, document)
            if found is not None:
                return found, messages
            return (left_out if _LEFT_OUT.match(name) else prose), []

        roles.role, directives.directive = role, directive
        try:
            yield
        finally:
            roles.role, directives.directive = known_role, known_directive


def _shown_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
                options: dict[str, Any] | None = None, content: list[str] | None = None) -> tuple[list[Any], list[Any]]:
    """An unknown role as Sphinx shows it: its text without its target ("the guide <guide>" is "the guide"), a
    "~" path by its last part; as code unless it names a page, a section or a term."""
    from docutils import nodes, utils

    shown = utils.unescape(text)
    kind = name.rsplit(":", 1)[-1]
    target = _WITH_TARGET.match(shown) if kind not in _VERBATIM_ROLES else None
    if target and target.group(1):
        shown = target.group(1)
    elif shown.startswith("~") and kind not in _VERBATIM_ROLES:
        shown = shown[1:].rsplit(".", 1)[-1]
    shown = shown.lstrip("!")
    node = nodes.inline if kind in ("ref", "doc", "term", "numref", "abbr", "guilabel", "menuselection") \
        else nodes.literal
    return [node(rawtext, shown)], []


@functools.cache
def _make_directives() -> tuple[Any, Any, Any]:
    """The directives an unknown name is read as: one left out, one whose body is code, one whose arguments
    and body are prose; each takes any arguments and options (made once per process)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class AnyOption(dict):  # type: ignore[type-arg]
        """Every option is accepted, as text (``:linenos:``, ``:caption: ...``)."""

        def __getitem__(self, name: str) -> Any:
            return directives.unchanged

        def __bool__(self) -> bool:
            return True

    class AnyDirective(Directive):
        """Any arguments, a body, any options."""

        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = AnyOption()

    class LeftOut(AnyDirective):
        def run(self) -> list[Any]:
            return []

    class CodeBlock(AnyDirective):
        def run(self) -> list[Any]:
            code = "\n".join(self.content)
            caption = self.options.get("caption") if isinstance(self.options.get("caption"), str) else ""
            shown = [nodes.paragraph(caption, caption)] if caption else []
            return shown + [nodes.literal_block(code, code)] if code.strip() else shown

    class Prose(AnyDirective):
        """An unknown directive's arguments ("versionadded:: 2.1") and its body, read as text."""

        def run(self) -> list[Any]:
            container = nodes.container()
            if self.name in ("sectionauthor", "codeauthor", "moduleauthor"):
                return []
            words = " ".join(self.arguments) if self.name not in _UNSHOWN_ARGUMENTS and self.name != "figure" else ""
            label = _VERSION_LABELS.get(self.name)
            if label is not None:  # "deprecated:: 3.0" with its sentence on the next line: one argument block
                version, _, said = words.partition(" ") if self.name != "seealso" else ("", "", words)
                words = label.format(version).rstrip()
                words += f": {said.strip()}" if said.strip() else (":" if self.content else ".")
            if words:  # parsed as the line of text it is (":func:`bar`" is a role)
                inline, messages = self.state.inline_text(words, self.lineno)
                container += nodes.paragraph(words, "", *inline)
                container += messages
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    return LeftOut, CodeBlock, Prose
