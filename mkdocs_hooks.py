"""Build hooks of the documentation site (mkdocs.yml): the pages of docs/ are written to be read in the repository,
so some of their links leave docs/ (the README, a benchmark's results, a source file). A site built from docs/
alone has none of those, and ``mkdocs build --strict`` stops on such a link. Here:

* the README becomes the site's home page (``index.md``), unless docs/ has an ``index.md`` of its own;
* any other file of the repository that a page links to is copied into the site under ``repository/``;
* each such link is rewritten to its place in the site, and the README's links into docs/ to the pages.

A link to a file that does not exist in the checkout is left as written, so mkdocs still reports it.

And :class:`ReSTRoles`, an extension of griffe (which reads the docstrings for mkdocstrings): the docstrings are
written for Sphinx-style reading (``:func:`name```, ``Layout::`` before a literal block); the roles become links
to the objects the reference shows (plain code for the others) and ``::`` a colon.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

import griffe
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent
#: where the copies of repository files go in the site
COPIES = "repository"
_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
_EXTERNAL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")

# site path of a page -> its file in the repository, and repository file -> its site path
_page_sources: dict[str, str] = {}
_site_paths: dict[str, str] = {}


def _docs_dir(config: Any) -> str:
    return Path(config["docs_dir"]).resolve().relative_to(ROOT).as_posix()


def _outside_fences(markdown: str) -> list[tuple[bool, str]]:
    """The text cut into (is prose, part): links inside fenced code blocks are left alone."""
    parts, prose, start = [], True, 0
    for fence in _FENCE.finditer(markdown):
        parts.append((prose, markdown[start:fence.start()]))
        prose, start = not prose, fence.start()
    parts.append((prose, markdown[start:]))
    return parts


def _targets(markdown: str, source: str) -> list[tuple[str, str]]:
    """Each relative link of a page as (link as written, repository path it points to)."""
    found = []
    for prose, part in _outside_fences(markdown):
        if not prose:
            continue
        for match in _LINK.finditer(part):
            link = match.group(2)
            if _EXTERNAL.match(link):
                continue
            path = link.split("#", 1)[0]
            if path:
                found.append((link, posixpath.normpath(posixpath.join(posixpath.dirname(source), path))))
    return found


def on_files(files: Files, config: Any) -> Files:
    docs = _docs_dir(config)
    _page_sources.clear()
    _site_paths.clear()
    for file in files.documentation_pages():
        _page_sources[file.src_uri] = f"{docs}/{file.src_uri}"
    readme = ROOT / "README.md"
    if files.get_file_from_path("index.md") is None and readme.is_file():
        files.append(File.generated(config, "index.md", abs_src_path=str(readme)))
        _page_sources["index.md"] = "README.md"
    for site_path, source in list(_page_sources.items()):
        _site_paths[source] = site_path
    for source in list(_page_sources.values()):
        for _, target in _targets((ROOT / source).read_text(encoding="utf-8"), source):
            if target.startswith(f"{docs}/") or target in _site_paths or not (ROOT / target).is_file():
                continue
            copy = f"{COPIES}/{target}"
            files.append(File.generated(config, copy, abs_src_path=str(ROOT / target)))
            _site_paths[target] = copy
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    docs = _docs_dir(config)
    source = _page_sources.get(page.file.src_uri)
    if source is None:
        return markdown
    here = posixpath.dirname(page.file.src_uri)
    out = []
    for prose, part in _outside_fences(markdown):
        if prose:
            def rewrite(match: re.Match[str]) -> str:
                link = match.group(2)
                if _EXTERNAL.match(link):
                    return match.group(0)
                path, hash_, anchor = link.partition("#")
                if not path:
                    return match.group(0)
                target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
                if target.startswith(f"{docs}/"):
                    site_path = target[len(docs) + 1:]
                else:
                    site_path = _site_paths.get(target)
                    if site_path is None:
                        return match.group(0)
                new = posixpath.relpath(site_path, here or ".") + hash_ + anchor
                return match.group(1) + new + match.group(3)

            part = _LINK.sub(rewrite, part)
        out.append(part)
    return "".join(out)


_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const):`(?P<name>~?[\w.]+)(?:\(\))?`")
_LITERAL = re.compile(r"(?<=\S)::(?=\n[ \t]*\n)")


def _identifier(name: str, obj: griffe.Object) -> str:
    """The full dotted path a role's name stands for in the docstring of ``obj``, or the name when unknown."""
    if name.startswith("citesum."):
        return name
    head, dot, rest = name.partition(".")
    scope = obj if obj.is_module or obj.is_class else obj.parent or obj
    try:
        return scope.resolve(head) + dot + rest
    except (griffe.NameResolutionError, KeyError, ValueError):
        return name


def _walk(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)


class ReSTRoles(griffe.Extension):
    """Sphinx roles and literal-block markers of the docstrings, as Markdown the site renders."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            if obj.docstring is None:
                continue

            def link(match: re.Match[str], obj: griffe.Object = obj) -> str:
                name = match.group("name")
                shown = name.lstrip("~").rsplit(".", 1)[-1] if name.startswith("~") else name
                # optional: a target the reference does not show is plain code, not a warning
                return f'<autoref identifier="{_identifier(name.lstrip("~"), obj)}" optional><code>{shown}</code></autoref>'

            obj.docstring.value = _LITERAL.sub(":", _ROLE.sub(link, obj.docstring.value))
