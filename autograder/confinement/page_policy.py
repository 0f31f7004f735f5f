"""A content-security policy for formgrader's pages: a Jupyter server extension.

formgrader shows students' answers and outputs inside its own page, in the instructor's
origin. :mod:`autograder.confinement.sanitise` cleans them at autograde; this policy is the
second wall: even markup that got through could run no script there.

A fixed policy cannot do it. nbgrader 0.9.6's formgrader pages rely on inline scripts
(``templates/base.tpl``, ``formgrade/formgrade_macros.html.j2``), and one of them differs
per page (``var submission_id = "..."``), and two ``onclick`` attributes hold script; a
policy without ``'unsafe-inline'`` and without their hashes breaks the grading page (its
score boxes would save nothing), while ``'unsafe-inline'`` lets any injected script run.

So each formgrader page gets its own policy, written as it is sent (a tornado output
transform): script from formgrader's own static folder (not the whole server: formgrader also
serves the files a student handed in, ``/formgrader/submissions/<id>/<file>``), MathJax's
folder on the CDN nbconvert loads it from, and the hashes of the page's inline scripts that
formgrader's template wrote, which are those before the notebook (``id="notebook-container"``):
everything a student controls comes after that point, and an inline script there matches no hash. The two fixed ``onclick``
handlers are allowed by hash (``'unsafe-hashes'``), no other. ``object-src 'none'`` and
``base-uri 'self'`` close plugins and a ``<base>`` that would move the page's own scripts.
A handed-in file served by formgrader gets no script at all and a sandbox (an origin of its
own, as Jupyter's own ``/files/`` handler does), so a student's ``evil.html`` reaches nothing.

Enable it with the formgrader extension (``jupyter_server_config.py`` at the repository root):
``c.ServerApp.jpserver_extensions = {"autograder.confinement.page_policy": True, ...}``.
"""

from __future__ import annotations

import base64
import hashlib
import re

from tornado.web import OutputTransform

#: Where nbconvert's classic template loads MathJax 2.7.7 from (``base/mathjax.html.j2``).
MATHJAX = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/"
#: The inline event handlers of formgrader's grading page (``formgrade_macros.html.j2``, the name toggles).
HANDLERS = ("toggle_name(true);", "toggle_name(false);")
#: Where the student's notebook starts on the grading page: no inline script after it is formgrader's.
NOTEBOOK_START = b'id="notebook-container"'
#: Paths under formgrader that serve files rather than pages of its templates.
_FILES = re.compile(r"/formgrader/(static/|submissions/[^/]+/.)")
_INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)


def _hash(text: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode() + "'"


def template_scripts(page: bytes) -> list[bytes]:
    """The inline scripts formgrader's template wrote: all of a page's, up to the notebook if it has one."""
    end = page.find(NOTEBOOK_START)
    head = page if end < 0 else page[:end]
    return [m.group(2) for m in _INLINE_SCRIPT.finditer(head) if not re.search(rb"\bsrc\s*=", m.group(1), re.I)]


#: For a file formgrader serves (a student's handed-in file, formgrader's own static files).
FILE_POLICY = "script-src 'none'; object-src 'none'; base-uri 'none'; sandbox"


def policy(page: bytes | None, static: str) -> str:
    """The policy for one formgrader page, whose scripts load from ``static`` (a URL ending in
    ``/formgrader/static/``); ``page`` None: a page sent in pieces, which gets no inline script."""
    hashes = sorted({_hash(script) for script in template_scripts(page or b"")})
    handlers = [_hash(handler.encode()) for handler in HANDLERS]
    script_src = [static, *hashes, "'unsafe-hashes'", *handlers, MATHJAX]
    return "; ".join([
        "script-src " + " ".join(script_src),
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'self'",
    ])


class FormgraderPolicy(OutputTransform):
    """Sets :func:`policy` on every HTML page under ``/formgrader`` as it is sent."""

    def __init__(self, request):
        super().__init__(request)
        path = request.path
        at = path.find("/formgrader")
        self.applies = at >= 0
        self.file = bool(_FILES.search(path))
        self.static = f"{request.protocol}://{request.host}{path[:at]}/formgrader/static/"

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.applies and self.file:
            headers["Content-Security-Policy"] = FILE_POLICY
        elif self.applies and headers.get("Content-Type", "").startswith("text/html"):
            headers["Content-Security-Policy"] = policy(chunk if finishing else None, self.static)
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "autograder.confinement.page_policy"}]


def _load_jupyter_server_extension(serverapp) -> None:
    # First, before tornado's gzip transform (when the server compresses): the page as written.
    serverapp.web_app.transforms.insert(0, FormgraderPolicy)
    serverapp.log.info("autograder: formgrader pages are served with a per-page content-security policy")
