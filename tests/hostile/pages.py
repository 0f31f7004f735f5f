"""Hostile entries: Scripts in what students control (markdown, HTML, SVG, JavaScript outputs), aimed at formgrader and the feedback pages.

The script (:data:`PAYLOAD`) does what the review's did: it names the page ``INJECTED`` (the
mark the browser tests look for), and on formgrader's grading page reads the ``_xsrf``
cookie and sends ``PUT /formgrader/api/grade/<id>`` with 99 points for every grade of the
submission on screen. It rides in the "Pause and reason" answer (``<script>``, ``<img
onerror>``, ``<svg onload>``) and in what a code cell displays (``HTML``, ``Javascript``,
``SVG``, ``Markdown``). ``SanitiseStudentContent`` shows the answer as text and cleans the
outputs, and the grades are those of the honest notebook: every automatic point.
``tests/test_page_scripts.py`` opens both pages in Chromium and checks that nothing ran.
"""

from __future__ import annotations

from .model import SMM, Hostile, points
from .notebooks import insert_after, replace

#: The mark the script leaves: the page's title.
MARK = "INJECTED"
PAYLOAD = (
    f"document.title='{MARK}';"
    "(function(){var x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1];"
    "if(typeof submission_id==='undefined'||typeof base_url==='undefined')return;"
    # The instructor's login cookie goes with every request; a page opened with ?token= has the token.
    "var t=new URLSearchParams(location.search).get('token');var a=t?{'Authorization':'token '+t}:{};"
    "fetch(base_url+'/api/grades?submission_id='+submission_id,{headers:a}).then(function(r){return r.json()})"
    ".then(function(gs){gs.forEach(function(g){fetch(base_url+'/api/grade/'+g.id,{method:'PUT',"
    "headers:Object.assign({'X-XSRFToken':x,'Content-Type':'application/json'},a),"
    "body:JSON.stringify({manual_score:99,extra_credit:99})})})})})()"
)

#: The "Pause and reason" answer: a real answer, then the script three ways.
ANSWER_WITH_SCRIPT = (
    "A new Python float is hashed by value, so each new gain is a new static value and a new trace.\n\n"
    f"<script>{PAYLOAD}</script>\n\n"
    f'And a picture: <img src="x" onerror="{PAYLOAD}">\n\n'
    f'<svg onload="{PAYLOAD}"><circle r="4"></circle></svg>\n'
)

#: A code cell whose outputs carry the script: HTML, JavaScript, SVG and markdown.
DISPLAYS_SCRIPT = f'''
from IPython.display import HTML, SVG, Javascript, Markdown, display

payload = {PAYLOAD!r}
display(HTML('<p>hello</p><script>' + payload + '</script><img src="x" onerror="' + payload + '">'))
display(Javascript(payload))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="' + payload + '"><circle r="4"/></svg>'))
display(Markdown('<img src="x" onerror="' + payload + '">'))
'''

#: The outputs :data:`DISPLAYS_SCRIPT` makes, before any sanitising (for a test's unsanitised control copy).
RAW_OUTPUTS = [
    {"output_type": "display_data", "metadata": {}, "data": {
        "text/plain": "<IPython.core.display.HTML object>",
        "text/html": f'<p>hello</p><script>{PAYLOAD}</script><img src="x" onerror="{PAYLOAD}">'}},
    {"output_type": "display_data", "metadata": {}, "data": {
        "text/plain": "<IPython.core.display.Javascript object>", "application/javascript": PAYLOAD}},
    {"output_type": "display_data", "metadata": {}, "data": {
        "text/plain": "<IPython.core.display.SVG object>",
        "image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{PAYLOAD}"><circle r="4"/></svg>'}},
    {"output_type": "display_data", "metadata": {}, "data": {
        "text/plain": "<IPython.core.display.Markdown object>", "text/markdown": f'<img src="x" onerror="{PAYLOAD}">'}},
]

BUILD = (replace("pause_and_reason", ANSWER_WITH_SCRIPT), insert_after("choose", DISPLAYS_SCRIPT))

ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # The answer is shown as text with a note, so the grader sees what was tried.
        "injects-script-in-answer", SMM, (replace("pause_and_reason", ANSWER_WITH_SCRIPT),),
        points(SMM), feedback=r"autograder: this text held raw HTML, which could run script",
    ),
    Hostile(
        "displays-script", SMM, (insert_after("choose", DISPLAYS_SCRIPT),),
        points(SMM), feedback=r"removed application/javascript from this output",
    ),
)
