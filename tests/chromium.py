"""Headless Chromium, driven through its command line, for the page tests.

No WebDriver and no browser download: the Debian ``chromium`` package, run as
``chromium --headless --screenshot`` or ``--dump-dom``. Measuring a page means
handing Chromium a copy of it with a small script (:data:`MEASURE_SCRIPT`) that,
once the page has loaded, computes widths in the real layout and writes them into
the DOM as JSON, which ``--dump-dom`` then returns.

The network is cut (every host resolves to nothing): a feedback page asks a CDN for
MathJax, and a test must neither wait for it nor depend on it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

WIDTH = 1100  # the window the legibility problem was seen in
TIMEOUT = 60  # seconds for one Chromium run


def find_or_install() -> str | None:
    """Path of ``chromium``, installed with apt-get when missing and we are root; None if neither."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    if subprocess.run(install, env=env, capture_output=True, timeout=600).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=300)
        subprocess.run(install, env=env, capture_output=True, timeout=600)
    return shutil.which("chromium")


def _run(binary: str, *args: str, height: int = 2000) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--mute-audio",
            f"--user-data-dir={profile}", f"--window-size={WIDTH},{height}",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--virtual-time-budget=5000",
            *args,
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def screenshot(binary: str, page: Path, png: Path, height: int = 2000) -> Path:
    return screenshot_url(binary, page.resolve().as_uri(), png, height)


def screenshot_url(binary: str, url: str, png: Path, height: int = 2000) -> Path:
    proc = _run(binary, f"--screenshot={png}", url, height=height)
    if not png.is_file():
        raise RuntimeError(f"chromium made no screenshot of {url}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return png


def dump_dom(binary: str, page: Path) -> str:
    return dump_dom_url(binary, page.resolve().as_uri())


def dump_dom_url(binary: str, url: str) -> str:
    """The DOM after load. Local servers only: host names resolve to nothing (an IP literal works)."""
    proc = _run(binary, "--dump-dom", url)
    if proc.returncode != 0 or "<html" not in proc.stdout.lower():
        raise RuntimeError(f"chromium dumped no DOM of {url}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return proc.stdout


# ---------------------------------------------------------------- measuring in the layout

#: For every output area of the page: its box and, per line of text inside it (each
#: ``<pre>`` line, each line ``<div>`` of the course's HTML feedback), whether the line
#: reaches past the box's right edge or the box scrolls sideways. The verdict goes into
#: ``<script id="measured" type="application/json">`` for ``--dump-dom`` to carry out.
MEASURE_SCRIPT = r"""
<script>
window.addEventListener("load", function () {
  var areas = [];
  document.querySelectorAll("div.output_area").forEach(function (area, index) {
    var box = area.querySelector(".output_subarea") || area;
    var rect = box.getBoundingClientRect();
    var right = rect.right;
    var lines = [];
    box.querySelectorAll("pre, .autograder-feedback > div").forEach(function (el) {
      // The ink of each word, not the line box: a space where a line wraps hangs past
      // the edge by design (white-space: pre-wrap) and hides nothing.
      var reach = 0, tops = {};
      var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (var node = walker.nextNode(); node; node = walker.nextNode()) {
        var word = /\S+/g, found;
        while ((found = word.exec(node.data)) !== null) {
          var range = document.createRange();
          range.setStart(node, found.index);
          range.setEnd(node, found.index + found[0].length);
          Array.prototype.forEach.call(range.getClientRects(), function (r) {
            reach = Math.max(reach, r.right);
            tops[Math.round(r.top)] = true;
          });
        }
      }
      lines.push({tag: el.tagName.toLowerCase(), text: el.textContent.slice(0, 200),
                  overflows: reach > right + 0.5 || el.scrollWidth > el.clientWidth + 1,
                  reach: reach, rows: Object.keys(tops).length});
    });
    areas.push({index: index, text: box.textContent, right: right, left: rect.left,
                top: rect.top + window.scrollY, bottom: rect.bottom + window.scrollY,
                scrolls: box.scrollWidth > box.clientWidth + 1, lines: lines});
  });
  var out = document.createElement("script");
  out.id = "measured";
  out.type = "application/json";
  out.textContent = JSON.stringify({width: window.innerWidth, height: document.documentElement.scrollHeight,
                                    areas: areas});
  document.body.appendChild(out);
});
</script>
"""


def measure(binary: str, page: Path, work: Path) -> dict:
    """The layout facts of :data:`MEASURE_SCRIPT` for ``page``, at :data:`WIDTH` pixels."""
    probe = work / f"measured-{page.name}"
    text = page.read_text(encoding="utf-8")
    probe.write_text(re.sub(r"</body>", lambda m: MEASURE_SCRIPT + m.group(0), text, count=1), encoding="utf-8")
    dom = dump_dom(binary, probe)
    found = re.search(r'<script id="measured" type="application/json">(.*?)</script>', dom, re.S)
    if not found:
        raise RuntimeError("the measuring script wrote nothing into the DOM (did the page load?)")
    return json.loads(found.group(1))


# ---------------------------------------------------------------- PNG, without Pillow


def png_pixels(png: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit PNG (what Chromium writes)."""
    data = png.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{png} is not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def _pixels(png: Path) -> tuple[int, int, list[bytes]]:
    try:
        from PIL import Image  # faster, where installed; not needed
    except ImportError:
        return png_pixels(png)
    with Image.open(png) as image:
        image = image.convert("RGB")
        width, height = image.size
        data = image.tobytes()
    return width, height, [data[y * width * 3:(y + 1) * width * 3] for y in range(height)]


def png_summary(png: Path, step: int = 3) -> dict:
    """Distinct colours and the share of pixels that are not white, on a grid of every ``step``-th pixel."""
    width, height, rows = _pixels(png)
    channels = len(rows[0]) // width
    colours, dark, seen = set(), 0, 0
    for row in rows[::step]:
        for x in range(0, width, step):
            pixel = row[x * channels:x * channels + 3]
            colours.add(pixel)
            seen += 1
            dark += sum(pixel) < 3 * 250
    return {"width": width, "height": height, "colours": len(colours), "not_white": dark / max(seen, 1)}
