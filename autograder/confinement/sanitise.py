"""Sanitise everything a student controls before any page shows it: :class:`SanitiseStudentContent`.

formgrader and the feedback pages render a notebook's markdown and rich outputs as HTML
(nbconvert, with raw HTML passed through and ``javascript:`` links allowed). A ``<script>``
or an ``onerror`` attribute in a "Pause and reason" answer would run in the instructor's
origin when the answer is opened for manual grading, with the ``_xsrf`` cookie and
formgrader's REST API within reach (``PUT /formgrader/api/grade/<id>`` for any student), and
again on the student's feedback page. The autograded notebook is what every page renders, so
this preprocessor, last in ``c.Autograde.autograde_preprocessors``, cleans it once for all:

- a markdown cell (and a ``text/markdown`` output) is parsed with nbconvert's own markdown
  parser, the one the pages render with, and left byte for byte as it is when every piece of
  raw HTML in it is an allowed formatting tag with harmless attributes and every link and
  image points to http(s), mailto, an attachment or a relative path. Otherwise it is shown as
  plain text: a note, then the student's whole source in a fenced code block (no HTML, no
  links). Honest answers, with ``a < b``, code spans, ``$math$`` and ``<sub>``, keep their bytes;
- ``text/html`` and ``image/svg+xml`` outputs go through ``nh3`` (ammonia): scripts, event
  attributes, frames, forms, ``javascript:`` URLs gone, inline ``style`` kept to harmless
  properties. The course's own feedback HTML (exactly what ``feedback.html_of`` makes of the
  output's text, which escapes that text) is kept byte for byte;
- ``application/javascript``, widget views and widget state, and every representation the
  pages do not render inertly are removed, and the output's text says so;
- ``image/png`` and ``image/jpeg`` are kept as they are when they decode to such an image;
  output metadata keeps only numeric sizes (nbconvert writes ``width=`` unquoted);
- raw cells go through ``nh3``; the notebook's ``widgets`` metadata (which makes nbconvert load
  a widget renderer) is dropped.

The grades are untouched: nbgrader has saved them (``SaveAutoGrades``) before this runs.
"""

from __future__ import annotations

import base64
import binascii
import html
import re

import nh3
from nbconvert.filters.markdown_mistune import MarkdownWithMath
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.grading import feedback

# ---------------------------------------------------------------- markdown

#: Formatting tags a markdown answer may hold as raw HTML, and the attributes each may carry
#: (``*``: any of them). No ``style``, ``class`` or ``id``: they could dress an answer as
#: formgrader's own controls or clobber names its scripts use.
MARKDOWN_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "center", "cite", "code", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd",
    "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var",
})
MARKDOWN_ATTRIBUTES = {
    "*": frozenset({"title", "align", "lang", "dir"}),
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "ol": frozenset({"start", "type"}),
    "details": frozenset({"open"}),
}
_URL_ATTRIBUTES = frozenset({"href", "src"})
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

#: A tag as CommonMark defines raw HTML (attributes separated by whitespace, unquoted values
#: without quotes, ``=``, ``<``, ``>`` or backticks): stricter than a browser, never looser.
_ATTRIBUTE = r"""\s+([A-Za-z_:][A-Za-z0-9_.:-]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?"""
_OPEN_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)((?:" + _ATTRIBUTE + r")*)\s*/?>")
_CLOSE_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")
_ONE_ATTRIBUTE = re.compile(_ATTRIBUTE)
#: Where a browser starts markup: a tag, an end tag, a comment or declaration, a processing instruction.
_MARKUP_START = re.compile(r"<[A-Za-z/!?]")
#: Without one of these, nbconvert's parser makes no raw HTML, no link but bare http(s) URLs, no mermaid.
_MAY_HOLD_MARKUP = re.compile(r"[<\[]|mermaid")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
#: What a browser drops from a URL before reading its scheme: ASCII whitespace and control characters.
_URL_IGNORED = re.compile(r"[\x00-\x20\x7f]")

MARKDOWN_NOTE = (
    "*[autograder: this text held {what}, which could run script in the browser of whoever "
    "opens it; it is shown below as plain text, exactly as written.]*"
)
#: Markdown longer than this (characters) is shown as plain text without being parsed.
MARKDOWN_PARSED = 64 * 1024
LONG_MARKDOWN_NOTE = ("*[autograder: this text is longer than {kib} KiB, too long to render; it is shown "
                      "below as plain text, exactly as written.]*")


def safe_url(url: str, image: bool = False) -> bool:
    """Whether a link or image URL is inert: http(s), mailto, relative, or (images) an attachment."""
    for candidate in {url, html.unescape(url)}:
        found = _SCHEME.match(_URL_IGNORED.sub("", candidate))
        if found and found.group(1).lower() not in _SAFE_SCHEMES | ({"attachment"} if image else set()):
            return False
    return True


def _safe_tag(match: re.Match) -> bool:
    name = match.group(1).lower()
    if name not in MARKDOWN_TAGS:
        return False
    if match.re is _CLOSE_TAG:
        return True
    allowed = MARKDOWN_ATTRIBUTES["*"] | MARKDOWN_ATTRIBUTES.get(name, frozenset())
    for attribute in _ONE_ATTRIBUTE.finditer(match.group(2)):
        key, value = attribute.group(1).lower(), (attribute.group(2) or "").strip("\"'")
        if key not in allowed or (key in _URL_ATTRIBUTES and not safe_url(value, image=name == "img")):
            return False
    return True


def safe_raw_html(raw: str) -> bool:
    """Whether every place a browser would start markup in ``raw`` is an allowed tag.

    Text between tags stays text: none of the allowed tags switches the browser's tokenizer
    out of its data state (no ``script``, ``style``, ``textarea``, ``title``), and comments,
    declarations and processing instructions are refused (their ends differ between parsers).
    """
    pos = 0
    while True:
        start = _MARKUP_START.search(raw, pos)
        if start is None:
            return True
        at = start.start()
        match = _OPEN_TAG.match(raw, at) or _CLOSE_TAG.match(raw, at)
        if match is None or not _safe_tag(match):
            return False
        pos = match.end()


def markdown_hazards(source: str) -> set[str]:
    """What in a markdown text would reach a page as live markup, as nbconvert's parser reads it."""
    hazards: set[str] = set()
    if not _MAY_HOLD_MARKUP.search(source):  # raw HTML and autolinks start with <, links with [
        return hazards
    tokens = MarkdownWithMath(renderer=None).parse(source)[0]
    stack = list(tokens)
    while stack:
        token = stack.pop()
        kind = token.get("type")
        if kind in ("inline_html", "block_html") and not safe_raw_html(token.get("raw", "")):
            hazards.add("raw HTML")
        elif kind in ("link", "image") and not safe_url(token.get("attrs", {}).get("url", ""), kind == "image"):
            hazards.add("a link that is not http(s), mailto or relative")
        elif kind == "block_code" and str(token.get("attrs", {}).get("info", "")).strip().startswith("mermaid"):
            if re.search(r"[<&]", token.get("raw", "")):  # nbconvert writes a mermaid block unescaped
                hazards.add("HTML in a mermaid block")
        stack.extend(token.get("children", ()) or ())
    return hazards


def sanitise_markdown(source: str) -> str:
    """``source`` itself when nothing in it is live markup; else a note and the source as a code
    block. A text longer than :data:`MARKDOWN_PARSED` is not parsed at all (nbconvert's parser takes
    seconds per hundred KiB of some texts, here and at every page view): it is shown as code too."""
    if len(source) > MARKDOWN_PARSED:
        return _as_code(source, LONG_MARKDOWN_NOTE.format(kib=MARKDOWN_PARSED // 1024), check=False)
    hazards = markdown_hazards(source)
    if not hazards:
        return source
    return _as_code(source, MARKDOWN_NOTE.format(what=" and ".join(sorted(hazards))))


def literal_markdown(text: str) -> str:
    """``text`` as markdown that renders as exactly ``text``, for a line of the course's that holds
    a student's words (a refused file's name) and goes where nbgrader renders markdown: a gradebook
    comment, which ``generate_feedback`` puts through ``markdown2html``, and the note cell. It is a
    code span whose backtick fence is longer than any run of backticks in ``text``: markdown makes
    no tag, entity, link or emphasis inside one and escapes its ``<`` and ``&``, and the pages'
    MathJax skips ``<code>``, so ``$...$`` or ``\\(...\\)`` in a name is no math either (backslash
    escapes would leave ``\\(`` to MathJax). Where the comment is shown unrendered (formgrader's
    comment box), the line reads as itself between backticks. Line breaks are the caller's: a name
    reaches here through :func:`~autograder.confinement.boundary.shown`, which has none."""
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    # CommonMark strips one space from each end of a code span that has one at both: a span that
    # starts or ends with a backtick needs them, and a text with its own spaces at both ends keeps them.
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _as_code(source: str, note: str, check: bool = True) -> str:
    """``note``, then ``source`` in a fenced code block that no line of it can close (the fence is
    longer than any run of backticks inside); ``check`` parses the result once more to be sure."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    shown = f"{note}\n\n{fence}\n{source}\n{fence}\n"
    if check and markdown_hazards(shown):  # cannot happen with nbconvert's parser; never pass live markup on
        return note + "\n\n" + html.escape(source)
    return shown


# ---------------------------------------------------------------- HTML and SVG outputs

#: CSS properties kept in ``style`` attributes of HTML outputs: layout, type and colour (what the
#: course's feedback boxes use), none that loads anything (``background-image``, ``content``,
#: ``cursor``) or lifts an element over the page (``position``, ``z-index``).
STYLE_PROPERTIES = frozenset({
    "font-family", "font-size", "font-weight", "font-style", "line-height", "color", "background",
    "background-color", "border", "border-radius", "border-collapse", "padding", "padding-left",
    "padding-right", "padding-top", "padding-bottom", "margin", "margin-left", "margin-right",
    "margin-top", "margin-bottom", "text-align", "text-indent", "text-decoration", "white-space",
    "overflow-wrap", "word-break", "box-sizing", "max-width", "width", "height", "vertical-align",
    "display",
})
#: A style value that could load something or escape the parser's reading of it goes whole.
_RISKY_STYLE = re.compile(r"url\s*\(|image-set|expression|@import|behavior|binding|\\|/\*", re.I)

HTML_TAGS = frozenset(nh3.ALLOWED_TAGS)  # nh3's formatting tags; links keep only safe schemes
HTML_ATTRIBUTES = {
    **{tag: set(attributes) for tag, attributes in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"style", "title"},
}
#: The only class kept (nh3 wants it here, not in the attributes): the course's feedback box,
#: which the page tests find by it.
HTML_CLASSES = {"div": {"autograder-feedback"}}

#: Drawing elements and attributes, as the HTML parser names them in SVG (camelCase where SVG has it).
#: ``use`` and its ``href`` stay for references inside the image (``#id``: matplotlib's markers).
SVG_TAGS = frozenset({
    "svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan",
    "defs", "clipPath", "linearGradient", "radialGradient", "stop", "title", "desc", "marker", "symbol",
    "use",
})
SVG_ATTRIBUTES = {"*": {
    "width", "height", "viewBox", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "d",
    "points", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity",
    "stroke-linecap", "stroke-linejoin", "stroke-dasharray", "opacity", "transform", "font-size",
    "font-family", "font-weight", "text-anchor", "dominant-baseline", "offset", "stop-color",
    "stop-opacity", "version", "xmlns", "preserveAspectRatio", "style", "clip-path", "id",
    "gradientUnits", "markerWidth", "markerHeight", "refX", "refY", "orient",
}, "use": {"href", "xlink:href"}}


_XLINK = "http://www.w3.org/1999/xlink"


def _style_filter(tag: str, attribute: str, value: str) -> str | None:
    """Drop a style (or SVG paint) that could load something, and an SVG reference out of the image."""
    if attribute in ("style", "fill", "stroke", "clip-path") and _RISKY_STYLE.search(value):
        return None
    if attribute in ("href", "xlink:href") and tag == "use" and not value.startswith("#"):
        return None
    return value


def sanitise_html(text: str) -> str:
    """An HTML output with nothing that runs or loads script; the course's feedback HTML kept as it is."""
    return nh3.clean(
        text, tags=set(HTML_TAGS), attributes=HTML_ATTRIBUTES, allowed_classes=HTML_CLASSES,
        filter_style_properties=set(STYLE_PROPERTIES), attribute_filter=_style_filter,
        url_schemes=set(_SAFE_SCHEMES), link_rel="noopener noreferrer",
    )


def sanitise_svg(text: str) -> str:
    """An SVG output reduced to drawing elements: no script, no event attributes, no links, no foreign HTML."""
    cleaned = nh3.clean(
        text, tags=set(SVG_TAGS), attributes=SVG_ATTRIBUTES, clean_content_tags={"script", "style"},
        filter_style_properties=set(STYLE_PROPERTIES) | {"fill", "stroke", "stroke-width", "opacity"},
        attribute_filter=_style_filter, url_schemes=set(), link_rel=None, strip_comments=True,
    )
    if "xlink:" in cleaned and "xmlns:xlink" not in cleaned:  # nh3 drops namespace declarations;
        # an <img> reads the SVG as XML, where an undeclared prefix fails the whole image
        cleaned = cleaned.replace("<svg", f'<svg xmlns:xlink="{_XLINK}"', 1)
    return cleaned


# ---------------------------------------------------------------- outputs

#: Representations kept, each made inert by the function given (None: inert as it is).
_KEPT = {
    "text/plain": None,
    "text/latex": None,  # nbconvert escapes it; MathJax runs with its Safe extension
    "text/html": "html",
    "text/markdown": "markdown",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpeg",
}
_MAGIC = {"png": (b"\x89PNG\r\n\x1a\n",), "jpeg": (b"\xff\xd8\xff",)}
REMOVED_NOTE = (
    "[autograder: removed {mimes} from this output: the pages that show this notebook "
    "(formgrader, feedback) do not run what a notebook displays]"
)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _raster_ok(kind: str, value) -> bool:
    try:
        data = base64.b64decode(_text(value).replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return data.startswith(_MAGIC[kind])


def _is_course_feedback(text: str, plain) -> bool:
    """The course's own feedback box: exactly what ``feedback.html_of`` writes for the output's text."""
    return plain is not None and text == feedback.html_of(_text(plain))


def _sanitise_data(data: dict) -> list[str]:
    """Clean one output's mime bundle in place; return the mime types removed."""
    removed = []
    plain = data.get("text/plain")
    for mime in list(data):
        how = _KEPT.get(mime, "remove")
        value = data[mime]
        if how is None:
            continue
        if how == "html":
            text = _text(value)
            if not _is_course_feedback(text, plain):
                data[mime] = sanitise_html(text)
        elif how == "markdown":
            data[mime] = sanitise_markdown(_text(value))
        elif how == "svg":
            cleaned = sanitise_svg(_text(value))
            if "<svg" in cleaned:
                data[mime] = cleaned
            else:
                del data[mime]
                removed.append(mime)
        elif how in _MAGIC:
            if not _raster_ok(how, value):
                del data[mime]
                removed.append(mime)
        else:
            del data[mime]
            removed.append(mime)
    return removed


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sanitise_metadata(metadata: dict) -> None:
    """Keep output metadata that nbconvert writes into a page only when inert: sizes must be numbers."""
    metadata.pop("filenames", None)
    for key in list(metadata):
        value = metadata[key]
        if key in ("width", "height") and not _number(value):
            del metadata[key]
        elif isinstance(value, dict):
            _sanitise_metadata(value)


def sanitise_output(output: dict) -> None:
    """Clean one code-cell output in place (streams and errors are escaped by every page already)."""
    if "metadata" in output and isinstance(output["metadata"], dict):
        _sanitise_metadata(output["metadata"])
    data = output.get("data")
    if not isinstance(data, dict):
        return
    removed = _sanitise_data(data)
    if removed:
        note = REMOVED_NOTE.format(mimes=", ".join(sorted(removed)))
        plain = data.get("text/plain")
        data["text/plain"] = note if plain is None else f"{_text(plain)}\n{note}"


class SanitiseStudentContent(NbGraderPreprocessor):
    """Make the autograded notebook safe for every page: no student markup or output runs script."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = sanitise_markdown(cell.source)
        elif cell.cell_type == "raw":
            if "<" in cell.source:  # nbconvert writes a raw cell into the page as HTML
                cell.source = sanitise_html(cell.source)
        for output in cell.get("outputs", []):
            sanitise_output(output)
        return cell, resources
