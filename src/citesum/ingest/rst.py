"""reStructuredText as the page it renders to: docutils (the reference parser) writes it as HTML, which
:func:`citesum.ingest.formats.read_rst` reads as it reads a web page's text, so headings, code blocks and lists
are what they are, not raw markup (".. _faq:", "`text <url>`_", ":meth:`Session.get`").

Most .rst files in the wild are written for Sphinx, whose roles and directives docutils does not know. An
unknown role shows its text (``:ref:`the guide <guide>``` is "the guide", ``:meth:`~a.Session.get``` is
``get``); an unknown directive keeps the prose it holds (``versionadded``, ``seealso``, ``only``), shows its code
as code (``code-block``, ``sourcecode``) and leaves out what only builds pages (``toctree``, ``autoclass``,
``literalinclude``, ``index``). Nothing is read from disk (``include``, ``raw`` and file-reading directives are
off) and docutils' own messages about the markup are not text.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any

#: directives that only build pages (a table of contents, API pages drawn from code, a file's inclusion)
_LEFT_OUT = re.compile(r"(?:toctree|index|highlight|literalinclude|include|auto\w*|\w+:auto\w*|py:module|"
                       r"currentmodule|module|tabularcolumns|graphviz|image|figure|plot|raw|program)$")
#: directives whose body is code
_CODE = frozenset({"code-block", "sourcecode", "code", "doctest", "testcode", "testoutput", "prompt", "console"})
#: a role's text with its target: "the guide <guide>"
_WITH_TARGET = re.compile(r"(.*?)\s*<[^<>]*>\s*$", re.DOTALL)
_patched = False


def rst_html(source: str) -> tuple[str, str]:
    """(title, HTML body) of a reStructuredText text, rendered by docutils with Sphinx's roles and
    directives read as the module docstring says."""
    from docutils.core import publish_parts

    _tolerate_sphinx()
    parts = publish_parts(source, writer="html5", settings_overrides={
        "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
        "raw_enabled": False, "syntax_highlight": "none", "_disable_config": True, "embed_stylesheet": False,
        "input_encoding": "unicode", "output_encoding": "unicode", "traceback": True})
    return html.unescape(parts["title"]).strip(), parts["html_body"]


def _tolerate_sphinx() -> None:
    """Let docutils read an unknown role or directive as the module docstring says, instead of reporting it
    and dropping its text (once per process)."""
    global _patched
    if _patched:
        return
    from docutils.parsers.rst import directives, roles

    known_role, known_directive = roles.role, directives.directive
    left_out, code_block, prose = _make_directives()

    def role(name: str, language: Any, lineno: int, reporter: Any) -> tuple[Any, list[Any]]:
        found, messages = known_role(name, language, lineno, reporter)
        return (found, messages) if found is not None else (_shown_role, [])

    def directive(name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
        if name in _CODE:  # docutils' own "code" refuses Sphinx's options (":linenos:") and drops the code
            return code_block, []
        found, messages = known_directive(name, language, document)
        if found is not None:
            return found, messages
        if _LEFT_OUT.match(name):
            return left_out, []
        return (code_block if name in _CODE else prose), []

    roles.role = role
    directives.directive = directive
    _patched = True


def _shown_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
                options: dict[str, Any] | None = None, content: list[str] | None = None) -> tuple[list[Any], list[Any]]:
    """An unknown role as Sphinx shows it: its text without its target ("the guide <guide>" is "the guide"), a
    "~" path by its last part; as code unless it names a page, a section or a term."""
    from docutils import nodes, utils

    shown = utils.unescape(text)
    target = _WITH_TARGET.match(shown)
    if target and target.group(1):
        shown = target.group(1)
    elif shown.startswith("~"):
        shown = shown[1:].rsplit(".", 1)[-1]
    shown = shown.lstrip("!")
    kind = name.rsplit(":", 1)[-1]
    node = nodes.inline if kind in ("ref", "doc", "term", "numref", "abbr", "guilabel", "menuselection") \
        else nodes.literal
    return [node(rawtext, shown)], []


def _make_directives() -> tuple[Any, Any, Any]:
    """The directives an unknown name is read as: one left out, one whose body is code, one whose arguments
    and body are prose; each takes any arguments and options."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class AnyOption(dict):  # type: ignore[type-arg]
        """Every option is accepted, as text (``:linenos:``, ``:caption: ...``)."""

        def __getitem__(self, name: str) -> Any:
            return directives.unchanged

        def __bool__(self) -> bool:
            return True

    class LeftOut(Directive):
        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            return []

    class CodeBlock(Directive):
        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            code = "\n".join(self.content)
            return [nodes.literal_block(code, code)] if code.strip() else []

    class Prose(Directive):
        """An unknown directive's arguments ("versionadded:: 2.1") and its body, read as text."""

        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            container = nodes.container()
            if self.arguments:
                words = " ".join(self.arguments)
                container += nodes.paragraph(words, words)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    return LeftOut, CodeBlock, Prose
