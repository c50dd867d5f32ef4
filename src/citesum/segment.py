"""Text as a reader sees it: a document's text cut into units of one kind each.

Extracted text keeps the layout of its source: a README wraps its paragraphs at 72 columns, a manual page
extracted from HTML keeps its navigation bar, a PDF its headings and table rows. A line break is therefore not
a sentence end. :func:`segments` reads the layout first:

* blocks are separated by blank lines; fenced (```) blocks are code;
* each line is classified: a list item (``-``, ``*``, ``•``, ``1.``, ``(a)``), a heading (Markdown ``#``, a line
  underlined with ``===``/``---``, or a short line standing alone without closing punctuation), a table row
  (``|`` cells, ASCII borders, columns aligned by runs of spaces, short ``Key: value`` fields), code (symbols
  rather than words), navigation or page furniture (``Next: ... Up: ...``, ``[Contents][Index]``, "Page 3 of
  9", "Copyright ..."), or prose;
* consecutive prose lines (and a list item's continuation lines) are one paragraph, whatever their wrapping
  (a title right above its paragraph, as HTML text gives it, is a heading, not the paragraph's first line),
  and a paragraph is cut into sentences by rule: at ``.``, ``!`` or ``?`` followed by a space, never after a
  known abbreviation or an initial (a number's or a name's dot has no space after it), nor after a dotted
  number that opens a sentence ("4.6. When I paste ...");
* a table of contents' entries, each followed by its dot leader (". . . . 82"), are headings, and the leaders
  boilerplate;
* a plain text's numbered section titles, each on a line or two of its own above a paragraph ("2. To generate
  an RSA key", "8) Message "apache2: bad user name" when starting apache2 directly"), are headings, not items;
* a definition list's terms, as a web page's text gives them (bulleted items of a few words with no stop, each
  above an item that opens a sentence, alternating: "- XFAIL" above "- A test failed, but it was expected to
  fail."), are ``term`` units: each heads its description, as a heading does, until the list ends.

Every unit is a span of the original text (offsets survive, so citations and evidence point into the document
as stored), with its kind. Only ``sentence`` units state facts; headings, terms, items that are not sentences,
table rows, code and boilerplate never do. Stock news filler ("declined to comment") and a text narrating itself
("This article delves into ...", "This section contains examples of ...", "In conclusion, ..."), a cross-reference
("See Section 7.9, ...", "For more details, see ...") and a sentence introducing a listing it does not hold ("...
as follows.") are sentences of the kind ``boilerplate``: true, and saying nothing a reader asked for.

The rules are ours and tested (tests/unit/test_segment.py) rather than a segmenter from the registry: the
summarizer cuts every context block at query time, and the whole-collection segmenters we know of (pysbd) cost
milliseconds a paragraph, which a question's several hundred sentences cannot afford.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Literal

Kind = Literal["sentence", "item", "heading", "term", "table", "code", "boilerplate"]
#: the kinds a summary may state: a prose sentence, or a list item that is itself a sentence
STATABLE: frozenset[str] = frozenset({"sentence", "item"})


@dataclass(frozen=True)
class Segment:
    """One unit of a text: ``text[start:end]``, of one kind."""

    start: int
    end: int
    kind: Kind


# --- line classification -------------------------------------------------------------------------------------

#: (a lower-case "o" set in and set apart by two spaces marks an item too, as in older plain-text READMEs: SoX's
#: "  o  Raw files in various binary formats"; at a line's start it may be a word of justified prose)
_ITEM_MARKER = re.compile(r"[ \t]*(?:[-*+•◦‣▪–—]|\d{1,3}[.)]|\(?[a-zA-Z0-9]{1,3}\)|(?<=[ \t])o(?=[ \t]{2}))"
                          r"[ \t]+(?=\S)")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_FENCE_LINE = re.compile("^" + _FENCE.pattern, re.MULTILINE)
#: the line that opens and closes a block of code, as Markdown writes it: what it encloses is one unit of code,
#: never sentences (the HTML reader puts a web page's <pre> between two)
CODE_FENCE = "```"
#: the words with which an FAQ labels an entry's question (the asker's case: "PROBLEM: AWStats seems to work ...
#: but I have no image shown.") and its answer ("SOLUTION: With Apache web server, ..."), besides "Q:" and "A:";
#: written with a capital or in capitals. "Fix:" is none: a change log opens its entries with it
FAQ_QUESTION_WORDS = ("Question", "Problem", "Symptom", "Symptoms")
FAQ_ANSWER_WORDS = ("Answer", "Solution", "Resolution", "Workaround")


def faq_labels(words: tuple[str, ...], letter: str) -> str:
    """A pattern of the labels ``words`` (as written with a capital, or in capitals) and ``letter``, without
    their colon."""
    return "(?:" + "|".join([letter, *words, *(word.upper() for word in words)]) + ")"


def answer_label(labels: str) -> re.Pattern[str]:
    """A pattern of an answer's label among ``labels`` (a pattern, without the colon) opening a line, with the
    answer after it. An answer opens as a sentence does; a legend's "A: the input probe" keeps its letter."""
    return re.compile(r"[ \t]*" + labels + r":[ \t]+(?=[A-Z0-9\"'(“‘])")


#: an FAQ's label of an answer ("A: By default, ...", "SOLUTION: With Apache web server, ..."): the answer's
#: sentence leaves it out, as an item's does its marker
FAQ_ANSWER_LABEL = answer_label(faq_labels(FAQ_ANSWER_WORDS, "A"))
#: the same, or a bare "A." or "A:" in a text whose entries are labelled "Q." and "A." (xinetd's FAQ: "Q. What is
#: xinetd ?" above "A. xinetd is a replacement for inetd, ..."), or "Q:" and "A:" (gpm's: "A: gpm.conf is not from
#: gpm itself."): there an answer may open in lower case after its label, which its sentence still leaves out;
#: elsewhere "A. Smith wrote ..." keeps its letter. Each: the lines that show a text labels its entries so (one a
#: "Q" label opens, one an "A" label does), and the answer's label it reads then
_BARE_ANSWER_LABELS = tuple(
    (re.compile(rf"^[ \t]*Q{mark}[ \t]+\S", re.MULTILINE), re.compile(rf"^[ \t]*A{mark}[ \t]+\S", re.MULTILINE),
     re.compile(rf"{FAQ_ANSWER_LABEL.pattern}|[ \t]*A{mark}[ \t]+(?=\S)"))
    for mark in (r"\.", ":"))
#: a line that an FAQ's label of a question opens ("Q: ...", "Question: ...", "PROBLEM: ..."), and one that a
#: label of an answer opens ("A: ...", "Answer: ...", "SOLUTION: ..."), whatever case follows
ENTRY_LINE_LABEL = re.compile(r"[ \t]*" + faq_labels(FAQ_QUESTION_WORDS, "Q") + r"[:.)][ \t]")
ANSWER_LINE_LABEL = re.compile(r"[ \t]*" + faq_labels(FAQ_ANSWER_WORDS, "A") + r"[:.)][ \t]")
#: a list marker alone on its line, its item on the next (a definition list's term as an HTML page's main text
#: gives it: "- \nWhat does http.postBuffer really do?"): a break between blocks
_LONE_MARKER = re.compile(r"[ \t]*[-*•◦‣▪][ \t]*")
_UNDERLINE = re.compile(r"[ \t]*([=\-~^*#])\1{2,}[ \t]*$")
_MARKDOWN_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+\S")
_TABLE_BORDER = re.compile(r"[+|]?[-=+|:]+(?: +[-=+|:]+)*[+|]?")  # matched whole on a stripped line
_COLUMN_GAP = re.compile(r"\S( {3,}|\t)\S")
_FIELD = re.compile(r"[ \t]*[A-Z][\w .-]{0,30}:[ \t]+\S")
_NAVIGATION = re.compile(
    r"^\W*(?:next|previous|prev|up|home|top|contents|index|table of contents|back to top|skip to (?:main )?content|"
    r"previous topic|next topic|this page|show source|quick search|navigation|go to|jump to)\b\W*(?::|$|\||»|«|\[)",
    re.IGNORECASE,
)
_LINK_LIST = re.compile(r"\[[^\]]{1,40}\]")
_FURNITURE = re.compile(
    r"^\W*(?:page \d+(?: of \d+)?|\d+ of \d+|copyright\b|©|\(c\) \d{4}|all rights reserved|last (?:updated|modified)\b|"
    r"created using\b|powered by\b|generated by\b|built with\b|report a bug|edit (?:this|on)\b|print this page)",
    re.IGNORECASE,
)
#: stock news filler: a true sentence that answers nothing
_FILLER = re.compile(
    r"\b(?:declined to comment|could not be reached for comment|did not (?:immediately )?respond to (?:a |an |our |"
    r"several |repeated )?(?:request|requests|inquiry|inquiries|email|emails|calls?)\b|no comment was available|"
    r"(?:more|further) (?:details|information) (?:would|will|are expected to) (?:follow|be (?:released|announced|"
    r"made available|provided))|this (?:story|article) (?:is developing|will be updated|has been updated))",
    re.IGNORECASE,
)
#: a text narrating itself ("This article delves into ...", "Let's take a closer look at ...", "In conclusion,
#: ..."): it announces what others state
_META = re.compile(
    r"\W*(?:(?:in )?(?:this|the present) (?:article|piece|post|report|essay|section|chapter|paper|document)\b[^.]{0,40}?"
    r"\b(?:delves?|explores?|examines?|looks? at|discuss(?:es)?|covers?|describes?|will|aims?|seeks?|takes?|"
    r"strives?|tries|attempts?|highlights?|outlines?|summari[sz]es|introduces?|presents?)\b|"
    # a manual's part saying what it holds ("This section contains examples of ...", "These release notes
    # contain ..."); a report that "shows" a finding states it
    r"(?:in )?(?:this|these) (?:section|chapter|document|guide|manual|howto|page|(?:release )?notes)\b[^.]{0,40}?"
    r"\b(?:contains?|provides?|lists?|gives?|shows?(?!\s+that\b))\b|"
    r"(?:(?:but |now )?let(?:'|’)?s|let us|we will|we'll|we now) (?:delve|dive|explore|examine|take a (?:closer |deeper )?look|look)\b|"
    # how a part of it was made ("This section was generated by AutoGen, using the agtexi-cmd template ...")
    r"this (?:section|chapter|page|document|manual)\s+(?:was|is|has been)\s+(?:automatically\s+)?"
    r"(?:generated|(?<=automatically )(?:produced|created))\s+(?:automatically\s+)?(?:by|from|with|using)\b|"
    r"in conclusion\b|to conclude\b|in summary\b|in sum\b)",
    re.IGNORECASE,
)
#: a cross-reference ("See Section 7.9, ...", "For more details, see the FAQ."): it says where a fact is, not the
#: fact, so a reader who asked is sent on rather than answered. What it points at is a place in a text: a
#: capitalised title, "the ..." ("see the dpkg manual"), a section, chapter or appendix, a manual page
#: ("deb-triggers(5)"), "more", "below" or "above"; "see a doctor" and "to see hidden files, run ls -a" are no
#: pointers
_POINTER_TARGET = (r"(?:also\s+)?(?:(?:the|this|that|its|their)\s+\S|more\b|below\b|above\b|section\b|chapter\b|"
                   r"appendix\b|§|[\w.-]+\(\d\w*\)|(?-i:[A-Z\d\"'“‘`<]))")
#: what more is told, and what it is about ("information about IBM Thinkpads on Linux")
_MORE = r"(?:info|information|details|documentation)\b(?:[^.]|\.\S){0,120}?"
#: a place in a text or on the web: an address, a title, a manual page, or a document named as one ("the Debian
#: Installer page", "the kernel documentation"), not a file a program writes ("the log file /var/log/foo.log")
_TEXT_PLACE = (r"(?:https?://|www\.|[\w.-]+\(\d\w*\)|(?-i:[A-Z\"“‘])|"
               r"(?:the|our|their|its|this|that|his|her|[\w.-]+['’]s)\s+(?:[\w'’.-]+\s+){0,5}?"
               r"(?:manual|page|pages|faq|wiki|readme|documentation|docs|web\s*site|site|howto|guide|reference|"
               r"section|chapter|archives?|sources?|mailing[- ]list|description|answer)\b)")
#: the rest of a sentence that tells nothing besides: no second clause, aside or finite verb
_NOTHING_ELSE = (r"(?:(?!\b(?:and\s+(?!(?:on|in|at|from)\s)|but|which|where|so|including|is|are|was|were|has|have)\b|"
                 r"[:;–—]|\((?!\d\w*\)))(?:[^.]|\.\S)){0,160}\.?\s*$")
_POINTER = re.compile(
    r"\W*(?:\d{1,3}\s+)?(?:please\s+)?(?:see|refer to)\s+" + _POINTER_TARGET + "|"
    r"\W*for (?:more|further|additional|complete|full)?\s*(?:information|details|discussion|explanation)\b"
    r"(?:[^.]|\.\w){0,120}?,\s*(?:please\s+)?(?:see|refer to|consult)\s+" + _POINTER_TARGET + "|"
    # where more is told, and nothing else: "More info about IBM Thinkpads on Linux can be found here." (the
    # link's words, the link gone), "You can find further details in the wiki." ("..., and the default is 300"
    # tells more)
    r"\W*(?:(?:more|further|additional|detailed)\s+" + _MORE + r"(?:\b(?:can|may|could)\s+be\s+found|"
    r"\b(?:is|are)\s+available)|you\s+(?:can|may|will)\s+find\s+(?:more|further|additional|detailed)\s+"
    + _MORE + r")\s+(?:here\b|there\b|below\b|(?:at|in|on|from)\s+" + _TEXT_PLACE + ")" + _NOTHING_ELSE,
    re.IGNORECASE,
)
#: a sentence that introduces what follows it ("Run the at(1) command to schedule a one-time job by the
#: following.", "The syntax of the file is as follows."): quoted alone, it points at a listing it does not hold
_INTRODUCER = re.compile(r"\b(?:the following|as follows)[.:]$", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")
#: the permalink mark Sphinx puts after a heading, "¶" or an icon font's
PERMALINK_MARKS = "\u00b6\uf0c1"
#: how a sentence ends: . ! or ?, a closing quote or bracket may follow
_ENDS_SENTENCE = re.compile(r"""[.!?]["'”’)\]]*$""")


#: a shell's prompt that names its user and host before the command ("user@debian:~$ sudo nft list ruleset",
#: "root@host:/etc# ls", "[me@box ~]$ make", "user@host $ ls", with a virtual environment's name before it)
_PROMPT = re.compile(r"(?:\(\S+\)\s+)?\[?[\w.-]+@[\w.-]+(?::\S*|\s+[~/][^\s\]]*)?\]?\s?[$#] +\S")


def _is_code(line: str) -> bool:
    """Symbols rather than words: a C prototype, a shell command, a config line."""
    stripped = line.strip()
    if len(stripped) < 3:
        return False
    if re.match(r"[$#>%] \S", stripped) or _PROMPT.match(stripped) or stripped.endswith(("{", "};", ");")):
        return True
    # (typographic quotes and apostrophes are prose's: "We’ve" alone on a line, a wrapped sentence's first word,
    # had been code)
    symbols = sum(not (c.isalnum() or c.isspace() or c in ".,'\"-:?!()’‘“”") for c in stripped)
    return symbols / len(stripped) > 0.12 and not stripped.endswith((".", "!", "?"))


def _is_boilerplate_line(line: str) -> bool:
    stripped = line.strip()
    if _NAVIGATION.match(stripped) or _FURNITURE.match(stripped):
        return True
    links = _LINK_LIST.findall(stripped)
    # "[Contents][Index]", "Up: Foo [Index]": a line that is mostly bracketed links
    return len(links) >= 2 and sum(len(link) for link in links) >= 0.3 * len(stripped)


def _is_table_row(line: str) -> bool:
    stripped = line.strip()
    if stripped.count("|") >= 2 or (len(stripped) >= 3 and _TABLE_BORDER.fullmatch(stripped)
                                    and any(c in stripped for c in "-=+")):
        return True
    return len(_COLUMN_GAP.findall(stripped)) >= 2


#: a table's row written between pipes, as Markdown writes one ("| arp | Exposes ARP statistics. | Linux |")
_PIPE_ROW = re.compile(r"\|.*\|")
#: the shortest line, and the fewest words, of fully justified prose
_JUSTIFIED_CHARACTERS = 50
_JUSTIFIED_WORDS = 7
#: the share of a justified line's fields that are words
_JUSTIFIED_WORD_SHARE = 0.7


def _justified(text: str, lines: list[tuple[int, int]], number: int) -> bool:
    """Whether line ``number`` is fully justified prose, its runs of spaces padding its words out to the right
    margin (screen's FAQ): a long line of words as long as the line above or below it. The runs of spaces in
    it are no columns of a table, which line up from row to row and leave the rows' ends ragged."""
    line = text[slice(*lines[number])].rstrip()
    fields = line.split()
    if len(line) < _JUSTIFIED_CHARACTERS or len(fields) < _JUSTIFIED_WORDS or _PIPE_ROW.fullmatch(line.strip()):
        return False  # (a row written between pipes is a row, whatever its length: "| loadavg | Exposes ... |")
    # words, not a fixed-width table's figures ("1234 root 20 0 1024 512 256 S 1.0 0.1 0:01.00 sshd")
    if sum(bool(_WORD.fullmatch(field.strip(".,;:()\"'"))) for field in fields) < _JUSTIFIED_WORD_SHARE * len(fields):
        return False
    return any(0 <= other < len(lines) and len(text[slice(*lines[other])].rstrip()) == len(line)
               for other in (number - 1, number + 1))


def _looks_like_heading(line: str) -> bool:
    """A short line without closing punctuation: "Thread Safety", "2.3 Installation", "NOTES"."""
    stripped = line.strip()
    words = stripped.split()
    return (0 < len(words) <= 10 and not stripped.endswith((".", ",", ";", "?", "!", ":"))
            and bool(_WORD.search(stripped)) and (stripped[0].isupper() or stripped[0].isdigit()))


#: three to ten words of a title that opens with a program's name, in lower case, with no mark of code, a
#: field, a list or a signature (",", "=", "/", ":", "(", "--")
_LOWER_CASE_TITLE = re.compile(r"[a-z][\w'’-]*(?: [\w'’\"-]+){2,9}")
#: the words a line of prose opens with, not a title ("and then it works fine", "see the manual for more")
_PROSE_OPENING = frozenset("and or but then so see thanks the a an if when to of in for with it this that".split())


def _lower_case_title(line: str) -> bool:
    stripped = line.strip()
    return bool(_LOWER_CASE_TITLE.fullmatch(stripped)) and stripped.split()[0].lower() not in _PROSE_OPENING


def _next_paragraph_opens(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], number: int) -> bool:
    """Whether the first line after the blank ones below line ``number`` opens a paragraph as a sentence does
    (in upper case)."""
    for following in range(number + 1, len(lines)):
        if kinds[following] != "blank":
            return text[slice(*lines[following])].lstrip()[:1].isupper()
    return False


def reads_as_title(line: str) -> bool:
    """Whether a line standing alone, between blank lines, is read as a title without a mark: a short line that a
    capital or a number opens and no stop ends ("Thread Safety"), or a lower-case title of three to ten words
    ("getmail seems to take longer than expected to initialize"). "hosts" is read as a line of text."""
    return _looks_like_heading(line) or _lower_case_title(line)


# --- sentences inside a paragraph ---------------------------------------------------------------------------

# A candidate end: . ! ? (plus closing quotes and brackets), then whitespace.
_SENTENCE_END = re.compile(r"""(?<![.!?])[.!?]++["'”’)\]]*+(?=\s)""")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e u.s u.k inc ltd co corp no fig al approx dept est gen gov cf "
    "resp ca viz eq eqs sec secs ch vol vols pp op ed eds jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
#: "e.g." and "i.e." written without their inner dot, in lower case as they are ("(eg. device is unplugged)");
#: "IE." is a browser's name, which can end a sentence
_UNDOTTED_ABBREVIATIONS = frozenset({"eg", "ie"})


_NEXT_WORD = re.compile(r"\s+(\S)")
#: a stop between quotes ("'!'", "“?”", '"!!")', TeX's "``.''"), naming the character
_QUOTED_STOP = re.compile(r"""(?:``|['"‘“])[.!?]+(?:''|['"’”])[)\]]*""")


def _quoted_stop(text: str, sentence_start: int, stop: int, end: int) -> bool:
    """Whether the stop at ``text[stop:end]`` is between quotes that open after a space, a bracket or the
    sentence's start."""
    return any(quote >= sentence_start and bool(_QUOTED_STOP.fullmatch(text, quote, end))
               and (quote == sentence_start or text[quote - 1].isspace() or text[quote - 1] in "([")
               for quote in (stop - 1, stop - 2))  # (a quote of one character, or TeX's two)


#: the most characters from a stop inside a quotation to the quotation's end
_QUOTATION_REST = 80


def _closes_quotation(text: str, stop: int, end: int) -> bool:
    """Whether a double quotation open at the stop ``text[stop]`` closes within ``_QUOTATION_REST`` characters
    after it, in the paragraph ``text[:end]``, before another stop: the next mark closes a quotation (it follows
    a word, not a space), so an inch mark ('a 3.5" drive. [1] It was sold "as is".') opens none."""
    closing = text.find('"', stop + 1, min(end, stop + _QUOTATION_REST))
    return (closing > 0 and not text[closing - 1].isspace()
            and _SENTENCE_END.search(text, stop + 1, closing) is None)


#: a section's or a question's number, dotted ("4.6."), that opens a sentence rather than ends one
_SECTION_NUMBER = re.compile(r"\d{1,3}(?:\.\d{1,3})+\.")
_INITIALS = re.compile(r"(?:[a-z]\.)+[a-z]")  # "u.s", "e.g" (the last dot is the candidate end)
#: a section's number right after an opening quote or bracket ("“3.3.", "(4."): a cross-reference's title follows
_QUOTED_NUMBER = re.compile(r"""["'“‘(\[]\d{1,3}(?:\.\d{1,3})*\.""")


def _word_before(text: str, start: int, end: int) -> str:
    """The last word of ``text[start:end]`` ("" if it holds none), found from the end: a long run of
    abbreviations costs each one its own word, not the sentence so far."""
    start, end = trimmed(text, start, end)
    first = end
    while first > start and not text[first - 1].isspace():
        first -= 1
    return text[first:end]


def _sentence_bounds(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Sentences of the paragraph ``text[start:end]``: cut after . ! ? and a space, unless the word before is a
    known abbreviation ("e.g.", "etc.", "Dr.") or an initial, or the dots are an elision in brackets ("(...)").
    A dot inside a number or a name ("3.5", "example.com") has no space after it. A sentence may start in lower
    case ("libffi is ...", "dpkg reads")."""
    sentence_start = start
    quotes, counted = 0, start  # the double quotation marks of the sentence so far, counted up to ``counted``
    for match in _SENTENCE_END.finditer(text, start, end):
        cut = match.end()
        following = _NEXT_WORD.match(text, cut, end)
        if following is None:
            continue
        if match.group(0)[0] == "." and match.start() > start and text[match.start() - 1] in "([":
            continue  # an elision in brackets ("The Schema(...) parameter ...", "[...]"): the sentence goes on
        if following.group(1).islower() and _quoted_stop(text, sentence_start, match.start(), cut):
            continue  # a stop named in quotes ("'!' is used by your shell as ..."), the sentence going on
        quotes += text.count('"', counted, match.start())
        counted = match.start()
        if not following.group(1).isupper() and quotes % 2 and _closes_quotation(text, match.start(), end):
            continue  # a message quoted with its stop: 'fails with "Unable to PUT /...\n[403, #0]" even if ...'
        if match.group(0)[0] == ".":
            if _SECTION_NUMBER.fullmatch(text, sentence_start, cut):  # "4.6. When I paste ...": the number opens it
                continue
            word = _word_before(text, sentence_start, match.start() + 1)
            # (see “3.3. Creating internal links”): a section's title follows; in "counted to “3.” Then" the quote
            # closes at the number, and the sentence ends
            if match.group(0) == "." and _QUOTED_NUMBER.fullmatch(word):
                continue
            word = word[:-1].lstrip("(\"'“")
            if word in _UNDOTTED_ABBREVIATIONS:
                continue
            word = word.lower()
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or _INITIALS.fullmatch(word):
                continue
        yield sentence_start, cut
        sentence_start = following.start(1)
        quotes, counted = 0, sentence_start
    yield sentence_start, end


# --- the whole text ------------------------------------------------------------------------------------------

_LineKind = Literal["blank", "prose", "item", "heading", "underline", "table", "code", "boilerplate"]


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, without its line break."""
    bounds, start = [], 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        bounds.append((start, match.start()))
        start = match.end()
    bounds.append((start, len(text)))
    return bounds


def _closes_on_its_line(line: str, fence: re.Match[str]) -> int:
    """Where the code that ``fence`` opens a line with is closed on the same line (after a space, by the same
    fence, which no non-space follows): the end of the closing fence, or 0 when the line leaves it open."""
    closing = _CLOSING_FENCES[fence.group(1)].search(line, fence.end())
    return closing.end() if closing else 0


#: each fence as it closes code on the line it opened it on: after a space, with no non-space after it
_CLOSING_FENCES = {fence: re.compile(rf"(?<=\s){re.escape(fence)}(?!\S)") for fence in ("```", "~~~")}


#: a root shell's command after its prompt: a program's name in lower case, then an option, a path, a variable,
#: a redirection or a pipe ("# sysctl -p", "# echo 1 > /etc/sysctl.d/x.conf", "# ./easyrsa init-pki")
_ROOT_COMMAND = re.compile(r"#[ \t]+(?:\.{0,2}/)?[a-z][\w.+-]*(?:/[\w.+-]+)*(?:[ \t]+\S+)*?[ \t]+"
                           r"(?:--?\w|[/~$<>|]|\.\.?/)")


def _heading_mark_is_code(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], number: int) -> bool:
    """Whether the Markdown heading's mark that opens line ``number`` is a shell's or a configuration's comment,
    or a root shell's prompt, in a listing set in plain text: indented (a heading is not), a command after a
    single mark, or a line in a run of code, or of comments of its own number of marks, with no blank line
    between (a heading stands apart from the code around it, unless a fence closes the code above it; a
    heading of another level, a fence, a badge or a table may follow a heading directly)."""
    line = text[slice(*lines[number])]
    if line[:1].isspace() or _ROOT_COMMAND.match(line):
        return True
    if number and kinds[-1] == "code" and not _FENCE.match(text, *lines[number - 1]):
        return True
    marks = len(line) - len(line.lstrip("#"))
    if number + 1 < len(lines):
        following = text[slice(*lines[number + 1])]
        return len(following) - len(following.lstrip("#")) == marks and following[marks:marks + 1] in (" ", "\t", "")
    return False


#: a shell's or a configuration's comment: "#" alone, or before a space
_COMMENT = re.compile(r"[ \t]*#+(?:[ \t]|$)")
#: a line opening as prose does: a capitalised word, then a word in lower case ("After this (as root) you may")
_PROSE_START = re.compile(r"[ \t]*[A-Z][a-z']*[ \t]+[a-z]")
#: a mark of code in a line of words: a setting, a call, a block, a variable, a path, a redirection
_CODE_MARK = re.compile(r"[=(){}\[\]$/<>|;]")


def _in_listing(above: str, line: str) -> bool:
    """Whether ``line``, under the line of code ``above``, goes on with it: a comment's empty line ("#"), or the
    line a comment comments on ('# Correct output type:' over 'OUTPUTTYPE="wv"'), set in no less than the
    comment, when it holds a mark of code and neither opens nor ends as a sentence does ("Copying the
    recognition criterion from" under a commented-out rule, "After this (as root) you may" under a command, open
    sentences)."""
    if line.strip() == "#":
        return True
    indent, above_indent = len(line) - len(line.lstrip()), len(above) - len(above.lstrip())
    return (bool(_COMMENT.match(above)) and indent >= above_indent and not _PROSE_START.match(line)
            and not _ENDS_SENTENCE.search(line.rstrip()) and _CODE_MARK.search(line) is not None and ". " not in line)


#: the mark of a "cut here" line ("---%<---", "----->8-----", "-----Cut"), and the most lines a listing cut out
#: between two of them holds
_CUT_MARK = re.compile(r"%<|>%|>8|8<|[\u2702\u2704]|(?i:cut(?: here)?)")
_CUT_LISTING_LINES = 100


def _cut_line(line: str) -> bool:
    """Whether ``line`` is a "cut here" line: one mark of scissors (or "Cut") in a rule of dashes."""
    stripped = line.strip().lstrip("*")
    mark = _CUT_MARK.search(stripped)
    if mark is None:
        return False
    rule = stripped[: mark.start()] + stripped[mark.end():]
    return rule.count("-") >= 3 and not rule.strip(" -=")


def _cut_out(text: str, lines: list[tuple[int, int]]) -> set[int]:
    """The lines of listings set between two "cut here" lines, those lines with them (the Dovecot wiki's
    configuration examples, "---%<---" above and below): code, however its lines read. The cut lines pair up in
    order, each pair at most ``_CUT_LISTING_LINES`` apart; a cut line without its pair marks nothing."""
    cuts = [number for number, bounds in enumerate(lines) if _cut_line(text[slice(*bounds)])]
    listed: set[int] = set()
    index = 0
    while index + 1 < len(cuts):
        first, last = cuts[index], cuts[index + 1]
        if last - first <= _CUT_LISTING_LINES:
            listed.update(range(first, last + 1))
            index += 2
        else:
            index += 1
    return listed


def _classify(text: str, lines: list[tuple[int, int]]) -> list[_LineKind]:
    kinds: list[_LineKind] = []
    fenced = False
    cut_out = _cut_out(text, lines)
    for number, (start, end) in enumerate(lines):
        line = text[start:end]
        if number in cut_out and not fenced:
            kinds.append("code")
            continue
        if (not fenced and _UNDERLINE.match(line) and number
                and _underlines(line, text[slice(*lines[number - 1])], kinds[-1])):
            # the line above is a heading, underlined; "~~~~" under a title is no code fence (Valgrind's FAQ)
            if (kinds[-2:] == ["item", "prose"] and (number == 2 or kinds[-3] == "blank")
                    and _NUMBERED.match(text, *lines[number - 2])
                    and _underlines(line, text[slice(*lines[number - 2])], "item")):
                kinds[-2] = "heading"  # a numbered title on two lines (mdadm's FAQ: "22. So how do I ..." / "array?")
            kinds[-1] = "heading"
            kinds.append("underline")
            continue
        fence = _FENCE.match(line)
        closes = _closes_on_its_line(line, fence) if fence and not fenced else 0
        if closes:
            # a block of code fenced within its line ("``` configure(cache=True) ``` This has two drawbacks:", an
            # HTML page's <pre> inside a list item, run into its line by the page's main text) opens no block:
            # the prose after it is read as prose (:func:`_around_inline_code` sets the code apart)
            kinds.append("prose" if line[closes:].strip() else "code")
            continue
        if fence:
            fenced = not fenced
            kinds.append("code")
            continue
        if fenced:
            kinds.append("code")
        elif not line.strip() or _LONE_MARKER.fullmatch(line):
            kinds.append("blank")
        elif _MARKDOWN_HEADING.match(line) and _heading_mark_is_code(text, lines, kinds, number):
            kinds.append("code")
        elif _MARKDOWN_HEADING.match(line) or line.rstrip().endswith(tuple(PERMALINK_MARKS)):  # Sphinx's anchor
            kinds.append("heading")
        elif _is_boilerplate_line(line):
            kinds.append("boilerplate")
        elif _is_table_row(line) and not _justified(text, lines, number):
            kinds.append("table")
        elif _ITEM_MARKER.match(line):
            kinds.append("item")
        elif _is_code(line) or (kinds and kinds[-1] == "code" and _in_listing(text[slice(*lines[number - 1])], line)):
            kinds.append("code")
        else:
            kinds.append("prose")
    # A short line without closing punctuation standing alone (blank or nothing around it, or directly above a
    # paragraph it titles) is a heading; a key-value line in a run of them is a field of a table.
    for number, kind in enumerate(kinds):
        if kind != "prose":
            continue
        start, end = lines[number]
        before = kinds[number - 1] if number else "blank"
        after = kinds[number + 1] if number + 1 < len(kinds) else "blank"
        if before in ("blank", "heading", "underline", "boilerplate") and _looks_like_heading(text[start:end]):
            if after in ("blank", "underline") or _shorter_than_next(text, lines, number):
                kinds[number] = "heading"
                continue
        # a title in lower case standing alone between blank lines, above a paragraph (as a web page's reader sets
        # a heading apart: "getmail seems to take longer than expected to initialize"), is a heading too
        if (number and before == "blank" and after == "blank" and _lower_case_title(text[start:end])
                and _next_paragraph_opens(text, lines, kinds, number)):
            kinds[number] = "heading"
            continue
        if _is_field(text, lines, number) and (
                (number and before in ("prose", "table") and _is_field(text, lines, number - 1))
                or (after == "prose" and _is_field(text, lines, number + 1))):
            kinds[number] = "table"
    return kinds


def _titles_above_prose(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind]) -> None:
    """Mark as headings the prose lines that read as a title ("Client/Server Applications": short, no closing
    punctuation) and stop short of their block's width (under half its longest line) with prose below. Text
    extracted from HTML has a paragraph a line and no blank line between them, so a title sits right above its
    paragraph; a hard-wrapped line runs to about the block's width. (A text that starts inside a line, as a
    passage may, has a short first line whose sentence goes on in lower case on the next: no title.)"""
    number = 0
    while number < len(lines):
        if kinds[number] == "blank":
            number += 1
            continue
        block_end = number
        while block_end + 1 < len(lines) and kinds[block_end + 1] != "blank":
            block_end += 1
        width = max(len(text[slice(*lines[i])].strip()) for i in range(number, block_end + 1))
        for i in range(number, block_end):
            line = text[slice(*lines[i])]
            following = text[slice(*lines[i + 1])].lstrip()
            if (kinds[i] == "prose" and kinds[i + 1] == "prose" and 2 * len(line.strip()) < width
                    and _looks_like_heading(line) and following[:1].isupper()):
                kinds[i] = "heading"
        number = block_end + 1


def _underlines(line: str, above: str, above_kind: _LineKind) -> bool:
    """Whether ``line`` (a run of one mark) underlines ``above``, a line of ``above_kind``: "=" or "-" always
    underline prose or a heading; a run of "~", which also opens a fenced code block ("run this:" above "~~~"),
    only when it is about as long as the line above. A numbered item is a section's title when its underline is
    about as long as it (cryptsetup's README.Debian: "2. Encrypted swap partition(s)" above a row of "-" as
    long); a short rule below a list's step ("---" in Markdown) is a break after it."""
    stripped = line.strip()
    as_long = len(stripped) >= 0.8 * len(above.strip())
    if above_kind == "item":
        return as_long and bool(_NUMBERED.match(above))
    return above_kind in ("prose", "heading") and (not stripped.startswith("~") or as_long)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _literal_blocks(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind]) -> None:
    """Mark as code the lines indented deeper than a line of prose ending with a colon, right below it or after
    one blank line, when none of them ends a sentence: what a manual shows ("Memory leak messages look like
    this:" above a log, an HTML ``<pre>`` that keeps its indentation, a plain-text README's "tmux depends on
    libevent 2.x, available from:" above a blank line and a URL indented by a tab), read as prose, would run a
    log's last line into the next sentence, and would leave the colon's sentence saying nothing. A quotation
    indented below its colon ("As the manual puts it:") ends its sentences and stays prose, and so do the lines
    of a paragraph indented as a whole (the curl FAQ's), as deep as its colon's; and after a blank line, a
    paragraph's first line indented deeper than its others (NetHack's Guidebook) is no block of its own."""
    number = 0
    while number + 1 < len(lines):
        line = text[slice(*lines[number])]
        colon = kinds[number] == "prose" and line.rstrip().endswith(":")
        unpunctuated = not colon and _points_at_block(text, lines, kinds, number)
        if colon or unpunctuated:
            depth = _indent(line)
            # (a title's colon, "Geo-restriction:" or "Internet Shortcut Options:" above a blank line, heads a
            # section, not a block it shows)
            first = number + 2 if kinds[number + 1] == "blank" and not _titled(line) else number + 1
            last = _deeper_lines(text, lines, kinds, first, depth)
            # a blank line inside the listing, above a line set in as deep as its first, goes on with it: "It is
            # filled by two important files:" above "→ chrony.conf (...)", a blank line and "→ chrony.keys (...)"
            # (a paragraph after the blank line that ends a sentence is prose of its own, and is left out)
            while (first <= last and last + 2 < len(lines) and kinds[last + 1] == "blank"
                   and kinds[last + 2] in ("prose", "table", "code")
                   and _indent(text[slice(*lines[last + 2])]) == _indent(text[slice(*lines[first])])):
                more = _deeper_lines(text, lines, kinds, last + 2, depth)
                if any(_ENDS_SENTENCE.search(text[slice(*lines[inside])].rstrip())
                       for inside in range(last + 2, more + 1)):
                    break
                last = more
            listing = range(first, last + 1)
            # after a blank line, a whole paragraph: not a first line indented deeper than the rest of its own
            parted = first > number + 1 and last + 1 < len(lines) and kinds[last + 1] != "blank"
            ends = any(_ENDS_SENTENCE.search(text[slice(*lines[inside])].rstrip()) for inside in listing)
            if not parted and not ends and listing:
                for inside in listing:
                    kinds[inside] = "code"
                if unpunctuated:
                    kinds[number] = "prose"  # a sentence that the block ends, not a title
            number = last
        number += 1


def _deeper_lines(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], first: int, depth: int) -> int:
    """The last of the lines of prose, table or code from ``lines[first]`` on that are all set in deeper than
    ``depth`` (``first - 1`` when that one is not)."""
    last = first - 1
    while (last + 1 < len(lines) and kinds[last + 1] in ("prose", "table", "code")
           and _indent(text[slice(*lines[last + 1])]) > depth):
        last += 1
    return last


def _points_at_block(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], number: int) -> bool:
    """Whether line ``number`` is a sentence that a hard-wrapped text ends with the block it introduces, below a
    blank line and indented, without a colon: "To set the most quiet mode use" above "hdparm -M 128 /dev/hda"
    (hdparm's README). It reads as no title: five words or more, those after the first in lower case (a name
    apart), the first and the last a word (not "Q6 -- Additional information sources"); and it stands alone,
    as the block does, with the paragraph after the block opening as a sentence does, or nothing after it (the
    text, or a passage, ends with the block). "If you see lines like" above a log and "in your syslog, then ..."
    is one sentence round the block, and stays as it is."""
    if kinds[number] not in ("prose", "heading") or number + 2 >= len(lines) or kinds[number + 1] != "blank":
        return False
    if number and kinds[number - 1] not in ("blank", "underline"):
        return False
    words = text[slice(*lines[number])].split()
    capitalised = sum(word[:1].isupper() for word in words[1:])
    if (len(words) < 5 or not words[0].isalpha() or not words[0][:1].isupper() or not words[-1].isalpha()
            or 3 * capitalised > len(words) - 1):
        return False
    depth = _indent(text[slice(*lines[number])])
    following = number + 2
    while following < len(lines) and kinds[following] != "blank":
        if _indent(text[slice(*lines[following])]) <= depth:
            return False
        following += 1
    if all(kind == "blank" for kind in kinds[following:]):
        return True
    return _next_paragraph_opens(text, lines, kinds, following)


def _titled(line: str) -> bool:
    """Whether ``line``, ending with a colon, is a title: one word, or words each capitalised."""
    words = line.strip()[:-1].split()
    return len(words) < 2 or all(word[:1].isupper() or not word[:1].isalpha() for word in words)


def _is_field(text: str, lines: list[tuple[int, int]], number: int) -> bool:
    """A short "Key: value" line that is no sentence ("Version: 1.2", not "Note: the library is thread-safe.")."""
    if number >= len(lines):
        return False
    line = text[slice(*lines[number])].strip()
    return (bool(_FIELD.match(line)) and len(line.split()) <= 8
            and not _ENDS_SENTENCE.search(line))


def _shorter_than_next(text: str, lines: list[tuple[int, int]], number: int) -> bool:
    """A title directly above its paragraph: less than half as long as the next line, which is prose."""
    if number + 1 >= len(lines):
        return False
    here = len(text[slice(*lines[number])].strip())
    following = text[slice(*lines[number + 1])].strip()
    # a sentence going on in lower case on the next line is no title above it ("The format is / described in")
    return here * 2 < len(following) and following[:1].isupper()


def segments(text: str) -> list[Segment]:
    """The units of ``text`` in order, each a span trimmed of surrounding whitespace (a list item's span leaves
    its marker out). See the module docstring for the rules.

    Example:
        >>> text = "Usage\\n=====\\n\\nThe library is\\nthread-safe. Call it\\nfrom any thread.\\n\\n- It is fast.\\n"
        >>> [(s.kind, " ".join(text[s.start:s.end].split())) for s in segments(text)]
        [('heading', 'Usage'), ('sentence', 'The library is thread-safe.'), ('sentence', 'Call it from any thread.'), ('item', 'It is fast.')]
    """
    lines = _lines(text)
    kinds = _classify(text, lines)
    _titles_above_prose(text, lines, kinds)
    _literal_blocks(text, lines, kinds)
    terms = _definition_terms(text, lines, kinds)
    titles = _item_titles(text, lines, kinds)
    answer = next((label for questions, answers, label in _BARE_ANSWER_LABELS
                   if questions.search(text) and answers.search(text)), FAQ_ANSWER_LABEL)
    out: list[Segment] = []
    number = 0
    while number < len(lines):
        kind = kinds[number]
        start, end = lines[number]
        if kind in ("blank", "underline"):
            number += 1
            continue
        if number in titles:  # (with its number: "2.1 Installation" keeps its own; a bullet is left out)
            bullet = _TYPED_BULLET.match(text, start, end)
            _append(text, bullet.end() if bullet else start, lines[titles[number]][1], "heading", out)
            number = titles[number] + 1
            continue
        if kind in ("prose", "item"):
            marker = (_ITEM_MARKER if kind == "item" else answer).match(text, start, end)
            start = marker.end() if marker else start
            last = number
            # the paragraph (or the item with its continuation lines) runs until a line of another kind, or one
            # that an answer's label opens ("PROBLEM: ..." on one line, "SOLUTION: ..." on the next)
            while (last + 1 < len(lines) and kinds[last + 1] == "prose"
                   and not answer.match(text, *lines[last + 1])):
                last += 1
            end = lines[last][1]
            unit: Kind = "item" if kind == "item" else "sentence"
            for piece_start, piece_end, fenced in _around_inline_code(text, start, end):
                if fenced:
                    _append(text, piece_start, piece_end, "code", out)
                    continue
                for sentence_start, sentence_end in _sentence_bounds(text, piece_start, piece_end):
                    _append(text, sentence_start, sentence_end, unit, out)
            number = last + 1
            continue
        last = number
        if (kind == "heading" and kinds[number + 1:number + 3] == ["heading", "underline"]
                and _NUMBERED.match(text, start, end)):
            last = number + 1  # a title on two lines, underlined
        if kind == "heading" and last + 1 < len(lines) and kinds[last + 1] == "underline":
            last += 1  # the underline goes with its heading: a passage cut after it still shows it
        if kind == "code":  # a block of code is one unit
            while last + 1 < len(lines) and kinds[last + 1] == "code":
                last += 1
        if number in terms:  # (its marker left out, as an item's is)
            _append(text, terms[number], end, "term", out)
            number += 1
            continue
        _append(text, start, lines[last][1], kind, out)
        number = last + 1
    return _contents_entries(text, out)


#: a numbered item's marker: "2.", "8)", "(3)"
_NUMBERED = re.compile(r"[ \t]*\(?\d{1,3}[.)][ \t]+(?=\S)")
#: the most lines and words of a section's title set out as an item
_TITLE_LINES = 2
_TITLE_WORDS = 30


def _standing_title(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], number: int
                    ) -> tuple[int, int] | None:
    """When the item on line ``number`` stands alone as a section's title does (a blank line above and below it,
    a line or two of at most ``_TITLE_WORDS`` words) with a paragraph of prose after it: its last line and the
    paragraph's first."""
    if kinds[number] != "item" or (number and kinds[number - 1] != "blank"):
        return None
    last = number
    while last + 1 < len(lines) and kinds[last + 1] == "prose" and last + 1 - number < _TITLE_LINES:
        last += 1
    after = last + 1
    if after < len(kinds) and kinds[after] != "blank":
        return None  # a longer item, or one run into what follows
    while after < len(kinds) and kinds[after] == "blank":
        after += 1
    words = len(text[lines[number][0]:lines[last][1]].split())
    if after == len(kinds) or kinds[after] != "prose" or words - 1 > _TITLE_WORDS:
        return None
    return last, after


#: a bullet as typed in plain text, where an author may mark a section's title with one (a typeset document's
#: bullet glyph, from a PDF or a web page, marks a list's item: its headings are set as headings)
_TYPED_BULLET = re.compile(r"[ \t]*[-*+][ \t]+(?=\S)")


def _item_titles(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind]) -> dict[int, int]:
    """The items that title the paragraphs below them, first line to last: a plain-text FAQ's or HOWTO's numbered
    sections ("8) Message "apache2: bad user name ${APACHE_RUN_USER}" when starting apache2" / "directly", a blank
    line, "Use apache2ctl ...") or bulleted entries (Pure-FTPd's FAQ: "* Users can delete root-owned files?", a
    blank line, the asker's question and the answer). Each stands alone (:func:`_standing_title`) and ends as a
    title or a question does (not with a stop, a comma or a colon: "1. Unpack the archive." and "2. Run:" are
    steps); a list's items follow one another, with no paragraph between. A bulleted one is no list's item besides:
    the nearest line above is no item of its list nor in one (a loose list's item may run on over lines; an item
    with another mark ends a list before it), nor a sentence ending with a colon that introduces a list, and the
    paragraph below is no more indented than its bullet (a Markdown list item's own paragraph is; an FAQ's numbered
    questions may have their answers indented). A lone bullet right under a heading is a list of one item ("##
    Requirements" over "* Python 3.8 or newer"), unless another bullet of the text is a title too. One is enough
    otherwise: the summarizer reads a passage, which may hold one section of a document's several. Where one is, the
    others set out alike (with markers of its kind) are titles too, even those that end with a stop ("9) A PUT with
    mod_dav_fs fails with "..." even if Apache has permission to write the file.", an entry's trouble told as a
    statement; "* "Sorry, I can't trust you".")."""
    found: dict[int, int] = {}
    for marker in (_NUMBERED, _TYPED_BULLET):  # (titles are set out alike when their markers are of one kind)
        titles: dict[int, int] = {}
        stated: dict[int, int] = {}  # those set out as titles that end with a stop
        above: int | None = None  # the nearest line above that is not blank
        opening: int | None = None  # the first line of the block that line is in (an item's, when it is one)
        under_heading: set[int] = set()  # bulleted titles right under a heading
        for number, line in enumerate(lines):
            standing = marker.match(text, *line) and _standing_title(text, lines, kinds, number)
            if standing and marker is _TYPED_BULLET and (
                    _in_a_list(text, lines, kinds, number, above, opening)
                    or _indent(text[slice(*lines[standing[1]])]) > _indent(text[slice(*line)])):
                standing = None  # a list's item, or one whose paragraph is its own, indented under it
            if standing and marker is _TYPED_BULLET and above is not None and kinds[above] in ("heading", "underline"):
                under_heading.add(number)
            if kinds[number] != "blank":
                opening = number if above != number - 1 else opening
                above = number
            if not standing:
                continue
            last = standing[0]
            title = text[line[0]:lines[last][1]].rstrip()
            if not title.endswith((".", ",", ";", ":")):
                titles[number] = last
            elif title.endswith("."):
                stated[number] = last
        if len(titles) + len(stated) < 2:  # a list of one item under its heading ("## Requirements" over "* ...")
            titles = {number: last for number, last in titles.items() if number not in under_heading}
        found |= {**titles, **stated} if titles else {}
    return found


def _in_a_list(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind], number: int, above: int | None,
               opening: int | None) -> bool:
    """Whether the bulleted item on line ``number`` is an item of a list, not a title: the nearest line above
    (``above``, not blank) is an item of its list, or in one (``opening``, the first line of that line's block: a
    loose list's item may run on over lines), or a sentence ending with a colon that introduces it."""
    if above is None:
        return False
    return (any(at is not None and kinds[at] == "item" and _same_marker(text, lines[at], lines[number])
                for at in (above, opening))
            or text[slice(*lines[above])].rstrip().endswith(":"))


def _same_marker(text: str, item: tuple[int, int], line: tuple[int, int]) -> bool:
    """Whether the bulleted item on ``item`` is set out as the one on ``line`` is, the same mark as deep ("*" and
    "*"; not "6)" and "*", nor a sub-list's "  *" and "*"): an item of the list it would be in."""
    above, here = text[item[0]:item[1]], text[line[0]:line[1]]
    return _indent(above) == _indent(here) and above.lstrip()[:1] == here.lstrip()[:1]


#: the most words of a definition list's term
_TERM_WORDS = 4
#: a bulleted item's marker (a numbered one marks a step, whose short items are steps too)
_BULLET = re.compile(r"[ \t]*[-*+•◦‣▪–—][ \t]+(?=\S)")


def _definition_terms(text: str, lines: list[tuple[int, int]], kinds: list[_LineKind]) -> dict[int, int]:
    """The lines that are the terms of a definition list, as a web page's main text gives one (a page's <dt>
    and <dd>, DejaGnu's manual): bulleted items on consecutive lines that alternate, at least twice, between
    a term (a few words with no stop) and its description (an item that opens in capitals and ends a
    sentence on its line), "- XFAIL" above "- A test failed, but it was expected to fail.", unless a line
    ending with a colon introduces the list. Each term's line number is mapped to where its words start; the
    lines are marked as headings (their items are no sentences to join). A changelog's or a command list's short
    items rarely alternate so with sentences."""
    terms: dict[int, int] = {}
    number = 0
    while number < len(lines):
        run: dict[int, int] = {}
        if kinds[number] != "item":  # (what is above a line is looked at only where a list may start)
            number += 1
            continue
        above = next((line for line in range(number - 1, -1, -1) if kinds[line] != "blank"), None)
        if above is not None and kinds[above] != "item" and text[slice(*lines[above])].rstrip().endswith(":"):
            number += 1  # a list a sentence introduces ("... one of these:") is shown with it, as its items
            continue
        while number + 1 < len(lines) and kinds[number] == kinds[number + 1] == "item":
            term = _BULLET.match(text, *lines[number])
            description = _BULLET.match(text, *lines[number + 1])
            words = text[term.end():lines[number][1]].strip() if term else ""
            said = text[description.end():lines[number + 1][1]].rstrip() if description else ""
            if not (words and len(words.split()) <= _TERM_WORDS and words[-1] not in ".!?:;,"
                    and said[:1].isupper() and _ENDS_SENTENCE.search(said)):
                break
            run[number] = term.end()
            number += 2
        if len(run) >= 2:
            terms.update(run)
        number += 1 if not run else 0
    for number in terms:
        kinds[number] = "heading"
    return terms


#: a block of code fenced within a line: an HTML page's <pre> inside a list item, whose lines the page's main
#: text runs together ("... using folder-hooks: ``` folder-hook . 'set read_inc=1000' ... ```")
_INLINE_CODE = re.compile(r"(?<!\S)(```|~~~)\s.*?(?<=\s)\1(?!\S)", re.DOTALL)
#: the share of code's marks (brackets, operators, "$", "#", "/", "_", ...) that tells code between two fences
#: from prose that writes a fence ("In Markdown, type ``` on a line to open a code block and ``` again"); and
#: the smaller share that does when two marks or more make it: Python has few of them ("from werkzeug.debug
#: import DebuggedApplication ... app = DebuggedApplication(app, evalex=True)", two "=" in a hundred
#: characters), and prose may hold one ("... write your text and/or notes, ...")
_INLINE_CODE_MARKS = 0.03
_FEW_CODE_MARKS = 0.01
#: characters of code rather than prose: brackets, operators, a shell's and a path's marks
_CODE_MARKS = frozenset("{}[]<>=;$#|\\/_*&%@~^`")


def holds_fence(text: str) -> bool:
    """Whether a line of ``text`` opens or closes a fenced block of code."""
    return _FENCE_LINE.search(text) is not None


def code_marks(text: str) -> float:
    """The share of ``text``'s visible characters that are code's marks (brackets, operators, "$", "#", "/",
    "_", ...): near none in prose."""
    visible = sum(not c.isspace() for c in text)
    return _marks(text) / visible if visible else 0.0


def _marks(text: str) -> int:
    """How many of ``text``'s characters are code's marks."""
    return sum(c in _CODE_MARKS for c in text)


def _around_inline_code(text: str, start: int, end: int) -> Iterator[tuple[int, int, bool]]:
    """(start, end, fenced) of the pieces of ``text[start:end]``: the prose around each fenced block of code, and
    the block."""
    for block in _INLINE_CODE.finditer(text, start, end):
        inside = text[block.start() + 3:block.end() - 3]
        share = code_marks(inside)
        if share < _INLINE_CODE_MARKS and not (share >= _FEW_CODE_MARKS and _marks(inside) >= 2):
            continue  # prose that writes a fence
        yield start, block.start(), False
        yield block.start(), block.end(), True
        start = block.end()
    yield start, end, False


#: a dot leader of a table of contents, cut at each ". " into units of dots alone
_LEADER = re.compile(r"[.\s]+")
#: the dots in a row that make a leader rather than an ellipsis (". . .")
_LEADER_DOTS = 3


def _contents_entries(text: str, units: list[Segment]) -> list[Segment]:
    """``units`` with a table of contents' entries as headings and its dot leaders as boilerplate: a PDF's
    contents page runs "I get an error about undefined yywrap(). . . . . . 82 How can I ..." into one
    paragraph, whose entries name sections and state nothing."""
    kinds = [unit.kind for unit in units]
    dots = [unit.kind in STATABLE and _LEADER.fullmatch(text, unit.start, unit.end) is not None for unit in units]
    number = 0
    while number < len(units):
        if not dots[number]:
            number += 1
            continue
        last = number
        while last + 1 < len(units) and dots[last + 1]:
            last += 1
        following = text[units[last + 1].start:units[last + 1].end] if last + 1 < len(units) else ""
        # a leader leads to a page number ("... . . . 82 How can I ..."): an ellipsis ". . . ." leads to words
        if last - number + 1 >= _LEADER_DOTS and following[:1].isdigit():
            kinds[number:last + 1] = ["boilerplate"] * (last - number + 1)
            if number and kinds[number - 1] in STATABLE:
                kinds[number - 1] = "heading"
        number = last + 1
    return [unit if unit.kind == kind else Segment(unit.start, unit.end, kind)
            for unit, kind in zip(units, kinds)]


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved inwards past the whitespace at both ends of ``text[start:end]`` (equal when it is
    all whitespace)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _append(text: str, start: int, end: int, kind: Kind, out: list[Segment]) -> None:
    start, end = trimmed(text, start, end)
    if kind == "heading":  # without the permalink mark Sphinx puts after it ("Pygments FAQ¶")
        while end > start and (text[end - 1] in PERMALINK_MARKS or text[end - 1].isspace()):
            end -= 1
    if end <= start:
        return
    if kind in ("sentence", "item") and (_FILLER.search(text, start, end) or _META.match(text, start, end)
                                         or _POINTER.match(text, start, end) or _INTRODUCER.search(text, start, end)):
        kind = "boilerplate"
    out.append(Segment(start, end, kind))


def is_whole_sentence(sentence: str) -> bool:
    """Whether a unit reads as a sentence a bullet can quote: it ends with . ! or ? (a closing quote or bracket
    may follow), has a word of letters, and is not a definition line of a manual ("- Function: int f (...)") nor
    opened by a stray list marker, nor by a word that only goes on with a sentence (:data:`_GOES_ON`). A
    command-line option may open it: a manual's list of options states what each does ("--lf, --last-failed - to
    only re-run the failures.")."""
    stripped = sentence.strip()
    if not _ENDS_SENTENCE.search(stripped) or not _WORD.search(stripped):
        return False
    if _NOT_A_SENTENCE.search(stripped) or _GOES_ON.match(stripped) or _RESUMED.match(stripped):
        return False
    return not stripped.startswith(("-", "•", "*", "—", "–")) or bool(_OPTION_OPENING.match(stripped))


#: a word in lower case that only goes on with a sentence: a piece cut from one too long for a passage ("would be
#: if you have some specific reason ...") starts with it, and so does the rest of a sentence that code interrupted
#: ("which is quite a mouthful ...", "where N is the count", "while the other keeps ..."); a sentence does not (one
#: may start with a command's or a keyword's name in lower case: "ufw has full support for IPv6.", "which python
#: prints the path of the interpreter.", "while loops run until ...", "where clauses filter ...")
_GOES_ON = re.compile(r"(?:and|or|but|nor|whom|whose|would|could|should|shall|might|must|is|are|was|were|been|"
                      r"being|has|had|of|to|in|on|for|with|by|from|than|because|whereas|although|though|unless|"
                      r"until|into|onto|upon|its|their|whereby|thereby|"
                      r"which(?=\s+(?:is|are|was|were|means|meant|makes|made|will|would|can|could|may|might|"
                      r"should|must|has|have|had|does|do|did|also|in\s+turn)\b)|"
                      r"where(?=\s+\S+\s+(?:is|are|was|were|stands|means|can|will|should|must|may)\b)|"
                      r"while(?=\s+(?:the|a|an|it|its|this|that|these|those|they|we|you|he|she|others?|still)\b))"
                      r"(?![\w-])")


#: an ellipsis before a word in lower case: the rest of a sentence that something interrupted ("…while a
#: namedtuple is intentionally behaving like a tuple ...", after the code that the sentence before it showed)
_RESUMED = re.compile(r"(?:…|\.\.\.)\s*[a-z]")


#: a command-line option opening a line ("--lf, ...", "-n  Do not ...", "--color[=WHEN] ...", "-b: Generate ..."):
#: a name in lower case or a single letter; not a list marker, which a space follows, nor a dash before a word
#: ("-This is ...")
_OPTION_OPENING = re.compile(r"--?(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*|[A-Za-z])(?=[=,:\[\s])")


#: what a sentence of prose never holds: a table of contents' dot leaders (". . ." or a lone " ." at the end),
#: or a section number opening it ("3 Utilities 3.1 Invoking ...", "13 4.11 Interleaved CRC .")
_NOT_A_SENTENCE = re.compile(r"\. \. \.|\s\.$|^\d+(?:\.\d+)*\s+(?:\d+(?:\.\d+)+\s+)?[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\s+\d+(?:\.\d+)+\s|^\d+(?:\.\d+)+\s")
