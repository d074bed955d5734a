"""Every language of the signage page is drawn with the fonts it ships: no glyph falls back (docs/display.md).

One browser and one page: the display restarts with each language on the same
address and the page is loaded again (an open page reconnects by itself, after
EventSource's retry of a few seconds a language: test_display_browser tests
that). Two checks per language, on
every word of it (put on the page, so words the current screen does not show
count too): Chromium says, per DOM node, which fonts drew its text (DevTools
``CSS.getPlatformFontsForNode``), and every one must be a web font the page
loaded from /static/fonts, never a system font; and each character, drawn on a
canvas in the page's font stack, regular and bold, must differ from the
missing-glyph box (a character no font has, drawn the same way).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from display_support import CHROMIUM, CHROMIUM_ARGS, LiveTable

if not CHROMIUM.exists():
    WHY = f"NO BROWSER: {CHROMIUM} is missing: the page's languages are NOT tested (apt-get install chromium)"
    print(f"\n!!! {WHY}\n", file=sys.stderr)
    pytest.skip(WHY, allow_module_level=True)

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

LANGUAGES = ["en", "fr", "es", "zh-Hans", "zh-Hant", "vi", "th", "ko"]
#: Every word of the page's language in one box, so words the current screen does not show are drawn too;
#: each grapheme cluster (a Thai consonant with its marks, one Hangul syllable) in a span of its own.
ALL_WORDS_JS = """() => { const box = document.createElement('div'); box.id = 'all-words';
  const text = Object.values(W).filter(v => typeof v === 'string').join(' ')
    + ' ' + Object.values(W.letters).join(' ');
  for (const {segment} of new Intl.Segmenter(document.documentElement.lang).segment(text))
    box.append(Object.assign(document.createElement('span'), {textContent: segment, className: 'cluster'}));
  box.style.cssText = 'position:fixed;left:0;top:0;width:100vw;font-weight:700;font-size:12px;z-index:9';
  document.body.append(box); const light = box.cloneNode(true); light.id = 'all-words-light';
  light.style.fontWeight = '400'; light.style.top = '50vh'; document.body.append(light); }"""
#: Latin (Vietnamese's too), its marks and punctuation: DejaVu Sans draws them; any other script is Noto's.
LATIN = re.compile(r"^[\u0000-\u024f\u0300-\u036f\u1e00-\u1eff\u2000-\u206f\u2190-\u27bf\u00a0-\u00ff]*$")


#: The characters of ``text`` drawn as the missing-glyph box in the page's fonts, regular or bold.
BOXES_JS = """async text => {
  const stack = getComputedStyle(document.body).fontFamily, out = new Set();
  const canvas = document.createElement('canvas'); canvas.width = canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = ch => { ctx.clearRect(0, 0, 64, 64); ctx.fillText(ch, 4, 48);
    return ctx.getImageData(0, 0, 64, 64).data.join(); };
  for (const weight of ['400', '700']) {
    ctx.font = `${weight} 40px ${stack}`;
    await document.fonts.load(ctx.font, text);
    const box = draw('\\u{10FFFD}');  // a private-use character no font here has: the box itself
    for (const ch of new Set(text.replace(/\\s/g, ''))) if (draw(ch) === box) out.add(ch);
  }
  return [...out].join('');
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _clusters(root: dict[str, Any]) -> dict[int, str]:
    """The node id and text of the first ``.cluster`` span of each text in each of the boxes
    (``#all-words``, ``#all-words-light``) of a DevTools document tree (``DOM.getDocument``, all depths)."""
    out: dict[int, str] = {}
    nodes = [root]
    while nodes:
        node = nodes.pop()
        attributes = node.get("attributes", [])
        box = dict(zip(attributes[::2], attributes[1::2], strict=True)).get("id")
        if box in ("all-words", "all-words-light"):
            first: dict[str, int] = {}
            for span in node.get("children", []):
                text = "".join(c.get("nodeValue", "") for c in span.get("children", []))
                first.setdefault(text, span["nodeId"])
            out.update((n, t) for t, n in first.items())
            continue
        nodes.extend(node.get("children", []))
    assert len(out) > 20, f"the page's boxes of words were not found in the document: {out}"
    return out


def test_every_language_draws_every_glyph_with_a_bundled_font(browser: Browser, tmp_path: Path) -> None:
    table = LiveTable(tmp_path, "baccarat", 26, title="Baccarat 8")
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        table.play(1)
        page.goto(table.url)
        cdp = page.context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        wrong: dict[str, set[str]] = {}
        boxes: dict[str, str] = {}
        for code in LANGUAGES:
            if code != "en":
                page.goto("about:blank")  # no feed open: the display stops at once
                table.set_language(code)
                page.goto(table.url)
                cdp.send("DOM.enable")
                cdp.send("CSS.enable")
            page.wait_for_function(f"document.documentElement.lang === '{code}' && "
                                   f"+document.body.dataset.seq >= {table.seq()}", timeout=20_000)
            page.evaluate(ALL_WORDS_JS)
            missing = page.evaluate(BOXES_JS, page.locator("#all-words").inner_text())
            if missing:
                boxes[code] = missing
            page.evaluate("document.fonts.ready.then(() => true)")
            # Every word, cluster by cluster: only fonts we ship, and a cluster of another script drawn by
            # DejaVu (which has none of it) is a row of boxes: each non-Latin cluster is a Noto face's alone.
            # A cluster's fonts follow from its text and its box's style alone: each text is asked once a box.
            for node, cluster in _clusters(cdp.send("DOM.getDocument", {"depth": -1})["root"]).items():
                drawn = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
                families = [f["familyName"] for f in drawn]
                wrong.setdefault(code, set()).update(f["familyName"] for f in drawn if not f["isCustomFont"])
                if not LATIN.match(cluster) and any(not f.startswith("Noto") for f in families):
                    boxes[code] = boxes.get(code, "") + cluster
            page.evaluate("document.getElementById('all-words').remove(); "
                          "document.getElementById('all-words-light').remove()")
        assert boxes == {}, f"characters drawn as the missing-glyph box: {boxes}"
        wrong = {k: v for k, v in wrong.items() if v}
        assert wrong == {}, f"glyphs drawn by fonts the page does not ship: {wrong}"
    finally:
        page.close()
        table.close()
