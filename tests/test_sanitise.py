"""Does the sanitiser take every way to run script out of what students control, and leave the rest?

``autograder/confinement/sanitise.py`` runs last at autograde; ``autograder/confinement/page_policy.py``
is formgrader's content-security policy. Without a browser and without nbgrader: each attack
vector alone, the course's own notebooks and samples, and the grader's feedback HTML.
``tests/test_page_scripts.py`` opens the pages in Chromium after a real autograde.
"""

from __future__ import annotations

import base64
import copy
import glob
import re
from html.parser import HTMLParser

import nbformat
import pytest
from conftest import REPO
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from autograder.confinement import page_policy
from autograder.confinement.sanitise import (
    LONG_MARKDOWN_NOTE, MARKDOWN_NOTE, MARKDOWN_PARSED, REMOVED_NOTE, SanitiseStudentContent, markdown_hazards, sanitise_html, sanitise_markdown,
    sanitise_output, sanitise_svg,
)
from autograder.grading.feedback import html_of

#: Elements that run, load or frame something, or change where the page's own links and scripts go.
LIVE_TAGS = {"script", "iframe", "object", "embed", "form", "meta", "link", "base", "style", "svg", "math",
             "frame", "frameset", "applet", "button", "input", "textarea", "select", "template", "noscript"}


class _Live(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag in LIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            url = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if name.startswith("on") or name in ("srcdoc", "formaction") or (
                    name in ("href", "src", "action", "data") and re.match(r"(javascript|vbscript|data):", url)):
                self.found.append(f"{tag} {name}={value!r}")


def live(page: str) -> list[str]:
    """The elements and attributes of ``page`` (HTML) that run or load script, as an HTML parser reads it."""
    parser = _Live()
    parser.feed(page)
    parser.close()
    return parser.found

MARKDOWN_ATTACKS = {
    "script": "My answer. <script>document.title='x'</script>",
    "img onerror": "See <img src=x onerror=\"fetch('/formgrader/api/grade/1',{method:'PUT'})\">",
    "svg onload": "<svg onload=alert(1)><circle r=1></svg>",
    "iframe": "<iframe srcdoc=\"<script>parent.x=1</script>\"></iframe>",
    "object": "<object data=\"javascript:alert(1)\"></object>",
    "embed": "<embed src=\"javascript:alert(1)\">",
    "form": "<form action=\"/formgrader/api/grade/1\" method=post>"
            "<button formaction=javascript:alert(1)>go</button></form>",
    "meta": "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "link": "<link rel=stylesheet href=\"https://evil.example/x.css\">",
    "style": "<style>body{background:url(javascript:alert(1))}</style>",
    "base": "<base href=\"https://evil.example/\">",
    "event on allowed tag": "<b onmouseover=alert(1)>bold</b>",
    "event after newline": "text <b\nonclick=alert(1)>bold</b>",
    "slash separated": "<img/src=x/onerror=alert(1)>",
    "javascript link": "[click me](javascript:alert(1))",
    "entity javascript link": "[click me](jav&#x61;script:alert(1))",
    "javascript autolink": "<javascript:alert(1)>",
    "javascript reference link": "[click][r]\n\n[r]: javascript:alert(1)",
    "javascript in raw a": "<a href=\"java&#x09;script:alert(1)\">x</a>",
    "data link": "[x](data:text/html,<script>alert(1)</script>)",
    "comment trick": "<!-- --!><img src=x onerror=alert(1)> -->",
    "math is no shelter": "$x$ <img src=x onerror=alert(1)> $y$",
    "html block": "<div>\n<img src=x onerror=alert(1)>\n</div>",
    "mermaid": "```mermaid\n<img src=x onerror=alert(1)>\n```",
    "details ontoggle": "<details open ontoggle=alert(1)>x</details>",
    "backticks in the attack": "```` <img src=x onerror=alert(1)> `````",
}

NOT_LIVE_TO_PYTHON = {
    MARKDOWN_ATTACKS["slash separated"],  # nbconvert's parser escapes it; a browser would run it
    MARKDOWN_ATTACKS["comment trick"],  # Python's parser ends the comment at -->; a browser at --!>
}

HONEST = [
    "If a < b and x > 0 then **both** hold; `a<b>` and `List<int>` are code.",
    "- a list\n- with $x_i < 1$ and $$\\sum_{i<n} x_i > 0$$\n\n1. numbered",
    "Water is H<sub>2</sub>O, x<sup>2</sup>, a line<br>break and <b>bold</b>, <em>stress</em>.",
    "A [link](https://jax.readthedocs.io) and <https://example.org>, ![plot](attachment:plot.png).",
    "```python\nif x < 0 and y > 1:\n    print('<script>')\n```",
    "| a | b |\n|---|---|\n| 1 < 2 | 3 > 2 |",
    "<details><summary>Why</summary>Because <code>jit</code> retraces.</details>",
]


def rendered(source: str) -> str:
    """What formgrader and the feedback pages make of a markdown cell (nbconvert's renderer)."""
    return markdown2html_mistune(source)


@pytest.mark.parametrize("attack", list(MARKDOWN_ATTACKS.values()), ids=list(MARKDOWN_ATTACKS))
def test_every_markdown_attack_is_shown_as_text(attack):
    if attack not in NOT_LIVE_TO_PYTHON:
        assert live(rendered(attack)), "the attack should be live without the sanitiser (the test has teeth)"
    cleaned = sanitise_markdown(attack)
    page = rendered(cleaned)
    assert not live(page), page
    assert not markdown_hazards(cleaned)
    if markdown_hazards(attack):  # (nbconvert itself escapes ``<img/src=...``: no tag to its parser)
        assert cleaned.startswith(MARKDOWN_NOTE.split("{")[0]) and attack in cleaned  # the grader sees it all


@pytest.mark.parametrize("answer", HONEST)
def test_honest_markdown_is_left_byte_for_byte(answer):
    assert sanitise_markdown(answer) == answer


def _markdown_cells(pattern: str):
    for path in sorted(glob.glob(str(REPO / pattern))):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                yield path, cell.source


def test_every_markdown_cell_of_the_samples_and_the_course_is_left_byte_for_byte():
    """The sample answers (correct, partial...) and the course's own cells: nothing in them is live markup."""
    cells = [*_markdown_cells("tests/samples/*/*.ipynb"), *_markdown_cells("source/*/*.ipynb")]
    assert len(cells) > 100
    changed = [(path, source[:80]) for path, source in cells if sanitise_markdown(source) != source]
    assert not changed


def test_the_course_feedback_html_is_kept_byte_for_byte():
    text = "demo / g: 1 of 3 points\n  PASS  passes <always> & \"more\" (1 of 1)\n  FAIL  fails (0 of 2)\n" \
           "        Problem:  <script>alert(1)</script>\n\n        Hint:     y"
    output = new_output("display_data", data={"text/plain": text, "text/html": html_of(text)})
    before = copy.deepcopy(output)
    sanitise_output(output)
    assert output == before


def test_html_that_merely_looks_like_feedback_is_cleaned_with_its_look_kept():
    forged = html_of("x / y: 3 of 3 points").replace("</div>\n</div>", "<img src=x onerror=alert(1)></div>\n</div>")
    cleaned = sanitise_html(forged)
    assert "onerror" not in cleaned and 'class="autograder-feedback"' in cleaned
    assert "padding-left:0ch;text-indent:-0ch" in cleaned and "background:#f7f7f7" in cleaned


HTML_ATTACKS = {
    "script": "<p>hi</p><script>document.title='x'</script>",
    "onerror": "<img src=x onerror=alert(1)>",
    "svg onload": "<svg onload=alert(1)></svg>",
    "iframe": "<iframe src=\"javascript:alert(1)\"></iframe>",
    "object and embed": "<object data=x></object><embed src=x>",
    "form": "<form action=/x><input name=a><button>b</button></form>",
    "meta and base and link": "<meta http-equiv=refresh content=0><base href=//e><link rel=import href=x>",
    "style element": "<style>*{background:url(javascript:alert(1))}</style>",
    "javascript href": "<a href=\"javascript:alert(1)\">x</a>",
    "math": "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
}


@pytest.mark.parametrize("attack", list(HTML_ATTACKS.values()), ids=list(HTML_ATTACKS))
def test_every_html_output_attack_is_removed(attack):
    assert live(attack)
    cleaned = sanitise_html(attack)
    assert not live(cleaned), cleaned


@pytest.mark.parametrize("style", [
    "background:url(javascript:alert(1));color:red", "width:expression(alert(1))",
    "position:fixed;top:0;z-index:9999", "color:red;background-image:url(https://evil.example/track)",
])
def test_styles_that_load_or_float_over_the_page_go(style):
    cleaned = sanitise_html(f'<div style="{style}">fake score box</div>')
    assert not re.search(r"url\(|expression|position|z-index", cleaned), cleaned
    assert "fake score box" in cleaned


def test_svg_output_keeps_its_drawing_and_loses_its_script():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" onload="alert(1)"><script>alert(1)'
           '</script><a href="javascript:alert(1)"><circle r="5" fill="red"/></a><foreignObject><img src=x '
           'onerror=alert(1)></foreignObject><use href="data:image/svg+xml,x"/><set attributeName="onload" '
           'to="alert(1)"/></svg>')
    cleaned = sanitise_svg(svg)
    assert live(svg)
    assert live(cleaned) == ["<svg>"], cleaned  # the drawing itself, and nothing that runs
    assert '<circle r="5" fill="red">' in cleaned and 'viewBox="0 0 10 10"' in cleaned and "data:" not in cleaned


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def test_outputs_keep_text_and_raster_images_and_lose_what_runs():
    kept = new_output("display_data", data={"text/plain": "<Figure>", "image/png": PNG,
                                             "image/jpeg": base64.b64encode(b"\xff\xd8\xff\xe0rest").decode()},
                      metadata={"image/png": {"width": 389, "height": 278}})
    before = copy.deepcopy(kept)
    sanitise_output(kept)
    assert kept == before

    running = new_output("display_data", data={
        "text/plain": "<IPython.core.display.Javascript object>",
        "application/javascript": "document.title='x'",
        "application/vnd.jupyter.widget-view+json": {"model_id": "m", "version_major": 2},
        "application/vnd.jupyter.widget-state+json": {"state": {}},
        "image/png": 'x" onerror="alert(1)',
    }, metadata={"image/png": {"width": "1 onerror=alert(1)", "height": 10}, "filenames": {"image/png": "x"}})
    sanitise_output(running)
    assert set(running.data) == {"text/plain"}
    assert running.data["text/plain"].endswith(REMOVED_NOTE.format(mimes=", ".join(sorted([
        "application/javascript", "application/vnd.jupyter.widget-state+json",
        "application/vnd.jupyter.widget-view+json", "image/png"]))))
    assert running.metadata == {"image/png": {"height": 10}}


def test_the_preprocessor_cleans_markdown_raw_cells_outputs_and_widget_state():
    answer = "My answer <script>alert(1)</script>"
    nb = new_notebook(cells=[
        new_markdown_cell(answer, metadata={"nbgrader": {"grade_id": "pause_and_reason", "solution": True}}),
        new_markdown_cell(HONEST[0]),
        new_raw_cell("<img src=x onerror=alert(1)>"),
        new_code_cell("display(HTML(...))", outputs=[
            new_output("display_data", data={"text/plain": "x", "text/html": "<b>ok</b><script>1</script>",
                                             "text/markdown": "[a](javascript:alert(1))"}),
            new_output("stream", name="stdout", text="<script>is escaped by every page</script>\n"),
        ]),
    ], metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {}}})
    nb, _ = SanitiseStudentContent().preprocess(nb, {})
    assert "widgets" not in nb.metadata
    assert nb.cells[0].source != answer and not markdown_hazards(nb.cells[0].source)
    assert nb.cells[0].metadata.nbgrader["grade_id"] == "pause_and_reason"
    assert nb.cells[1].source == HONEST[0]
    assert "onerror" not in nb.cells[2].source
    data = nb.cells[3].outputs[0].data
    assert data["text/html"] == "<b>ok</b>" and not markdown_hazards(data["text/markdown"])
    assert nb.cells[3].outputs[1].text == "<script>is escaped by every page</script>\n"


# ---------------------------------------------------------------- formgrader's policy

GRADING_PAGE = b"""<html><head><script src="/formgrader/static/js/a.js"></script>
<script type="text/javascript">
var submission_id = "abc";
</script></head><body><nav><script>$('x').tooltip();</script></nav>
<div class="container" id="notebook-container"><p>answer</p><script>document.title='x'</script></div></body></html>"""


def test_the_policy_allows_formgraders_inline_scripts_by_hash_and_no_student_script():
    csp = page_policy.policy(GRADING_PAGE, "http://127.0.0.1:1/formgrader/static/")
    script_src = next(d for d in csp.split("; ") if d.startswith("script-src ")).split()[1:]
    assert page_policy._hash(b'\nvar submission_id = "abc";\n') in script_src
    assert page_policy._hash(b"$('x').tooltip();") in script_src
    assert page_policy._hash(b"document.title='x'") not in script_src
    assert "'unsafe-inline'" not in script_src and "'self'" not in script_src
    assert "http://127.0.0.1:1/formgrader/static/" in script_src and "object-src 'none'" in csp


def test_a_file_formgrader_serves_gets_a_sandbox_and_no_script():
    class Request:
        protocol, host = "http", "127.0.0.1:1"

        def __init__(self, path):
            self.path = path

    headers = {"Content-Type": "text/html"}
    for path, expected in [("/formgrader/submissions/abc/evil.html", page_policy.FILE_POLICY),
                           ("/formgrader/submissions/abc", None)]:
        _, sent, _ = page_policy.FormgraderPolicy(Request(path)).transform_first_chunk(
            200, dict(headers), GRADING_PAGE, True)
        sent_policy = sent["Content-Security-Policy"]
        assert sent_policy == expected if expected else "sha256-" in sent_policy


def test_markdown_too_long_to_parse_is_shown_as_written_without_being_parsed():
    """nbconvert's parser takes seconds per hundred KiB of nested link openers, in nbgrader's process
    and at every page view: past MARKDOWN_PARSED the text is a code block, its script inert."""
    slow = "[a](" * (MARKDOWN_PARSED // 4 + 1) + "\n<script>alert(1)</script>\n```\n<img src=x onerror=alert(2)>\n"
    shown = sanitise_markdown(slow)
    assert shown.startswith(LONG_MARKDOWN_NOTE.format(kib=MARKDOWN_PARSED // 1024))
    assert slow in shown and markdown_hazards(shown) == set()
    page = markdown2html_mistune(shown)
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;" in page


# ---------------------------------------------------------------- ScrubGraderSource: only the grader's own lines

def _numpy_traceback() -> tuple[list[str], str]:
    """A real NumPy traceback of a student's self-check, as the kernel shows it (IPython's coloured frames,
    each with the lines around it) and as ``traceback.print_exc`` prints it."""
    import sys
    import traceback

    import numpy as np
    from IPython.core.ultratb import AutoFormattedTB

    try:
        np.testing.assert_allclose([1.0, 2.0], [1.0, 3.0])
    except AssertionError:
        kind, error, tb = sys.exc_info()
        shown = AutoFormattedTB(mode="Context", theme_name="linux").structured_traceback(kind, error, tb)
        return shown, traceback.format_exc()
    raise AssertionError("assert_allclose did not raise")


def _grader_function() -> list[str]:
    """The lines of a grader function as ``inspect.getsource`` gives them (a student printing it)."""
    import inspect

    from autograder.grading import grade

    return inspect.getsource(grade._run_one).splitlines()


def test_a_students_numpy_traceback_is_left_whole():
    """NumPy's own lines around a frame (``except ValueError:``) are lines of the grader too, but under
    NumPy's frame they are NumPy's: nothing of the traceback goes, in the text or through the preprocessor."""
    from autograder.confinement.preprocessors import REMOVED, ScrubGraderSource, _long_lines, scrub

    shown, printed = _numpy_traceback()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(shown))
    assert "except ValueError:" in plain and "except ValueError:" in _long_lines(), \
        "the traceback no longer shows a line NumPy shares with the grader: pick another"
    assert [scrub(part) for part in shown] == shown
    assert scrub(printed) == printed
    cell = new_code_cell("import numpy as np\nnp.testing.assert_allclose([1.0, 2.0], [1.0, 3.0])", outputs=[
        new_output("error", ename="AssertionError", evalue="Not equal", traceback=shown),
        new_output("stream", name="stderr", text=printed),
    ])
    before = copy.deepcopy(cell)
    ScrubGraderSource().preprocess_cell(cell, {}, 0)
    assert cell == before and REMOVED not in str(cell)


def _cache_miss_explanations() -> list[str]:
    """JAX's own explanations of tracing-cache misses, of every kind the course shows its students."""
    import functools
    import logging

    import jax
    import jax.numpy as jnp

    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    try:
        with jax.explain_cache_misses(True):
            def twice(x, k):
                return x * k

            jitted = jax.jit(twice, static_argnames="k")
            jitted(jnp.ones(3), k=2)
            jitted(jnp.ones(4), k=2)  # a shape
            jitted(jnp.ones(4, jnp.int32), k=2)  # a dtype
            jitted(jnp.ones(4), k=3)  # a static value
            for _ in range(2):
                jax.jit(lambda v: v + 1)(jnp.ones(2))  # a function made afresh on one line
            jax.jit(functools.partial(twice, k=2))(jnp.ones(2))
            jax.jit(jax.checkpoint(twice), static_argnums=1)(jnp.ones(3), 2)  # the debug info
    finally:
        logger.removeHandler(handler)
    return records


def test_jaxs_own_cache_miss_explanations_are_left_whole():
    """A notebook that turns on ``jax_explain_cache_misses`` prints JAX's explanation lines
    ("never seen function:", "different input types:"): none is the grader's, whatever the
    grading package's own docstrings quote of them."""
    from autograder.confinement.preprocessors import REMOVED, scrub

    explanations = _cache_miss_explanations()
    shown = "\n".join(explanations)
    assert "never seen function:" in shown and "different input types:" in shown, shown
    for text in explanations:
        assert scrub(text) == text, (text, scrub(text))
    assert REMOVED not in scrub(shown)


def test_a_lone_line_a_library_has_too_stays_and_a_lone_grader_line_goes():
    from autograder.confinement.preprocessors import REMOVED, grader_lines, library_lines, scrub

    assert "except ValueError:" in library_lines()
    assert scrub("caught it\nexcept ValueError:\nfine") == "caught it\nexcept ValueError:\nfine"
    distinctive = next(line for line in _grader_function() if line.strip() in grader_lines())
    assert scrub(f"before\n{distinctive}\nafter") == f"before\n{REMOVED}\nafter"


@pytest.mark.parametrize("form", ["plain", "numbered", "coloured", "html"])
def test_grader_source_printed_whole_is_removed_every_line(form):
    """A grader function printed as it is, with a listing's line numbers, in IPython's colours, or as
    markup: every line of it goes, short and generic ones (``return ...``, ``)``) too."""
    from html import escape

    from autograder.confinement.preprocessors import REMOVED, scrub, scrub_html

    source = _grader_function()
    if form == "numbered":
        lines = [f"{n:5d} | {line}" for n, line in enumerate(source, 100)]
    elif form == "coloured":
        lines = [f"\x1b[92m{n:5d}\x1b[39m \x1b[38;5;255m{line}\x1b[39m" for n, line in enumerate(source, 100)]
    elif form == "html":
        lines = [f"<div>{escape(line)}</div>" for line in source]
    else:
        lines = source
    text = "my own output\n" + "\n".join(lines) + "\nmore of my own output"
    out = (scrub_html(text) if form == "html" else scrub(text)).split("\n")
    mark = REMOVED if form != "html" else escape(REMOVED)
    assert out[0] == "my own output" and out[-1] == "more of my own output"
    body = out[1:-1]
    assert [line for line in body if line != mark and re.sub(r"<[^>]+>", "", line).strip()] == []
    assert body.count(mark) == sum(1 for line in source if line.strip())


def test_a_grader_frame_loses_its_source_and_a_library_frame_keeps_its_own():
    """A traceback through the grader (a frame under any copy of the package) shows no grader line; a
    forged library frame cannot shelter a grader line that the library's file does not hold."""
    import os

    from autograder.confinement.preprocessors import REMOVED, grader_lines, scrub

    source = _grader_function()
    distinctive = next(line.strip() for line in source if line.strip() in grader_lines())
    through_grader = (
        "Traceback (most recent call last):\n"
        '  File "/opt/jail/site-packages/autograder/grading/grade.py", line 120, in _run_one\n'
        "    return x\n"
        "           ^\n"
        "ValueError: bad")
    assert scrub(through_grader).split("\n") == [
        "Traceback (most recent call last):",
        '  File "/opt/jail/site-packages/autograder/grading/grade.py", line 120, in _run_one',
        REMOVED, "           ^", "ValueError: bad"]
    forged = f'  File "{os.__file__}", line 1, in <module>\n    {distinctive}\n    except ValueError:'
    assert scrub(forged).split("\n") == [f'  File "{os.__file__}", line 1, in <module>', REMOVED,
                                        "    except ValueError:"]
