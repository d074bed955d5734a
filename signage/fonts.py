"""Bundle the Noto fonts the signage page needs for Chinese, Korean and Thai, cut down to the glyphs it shows.

Why: a kiosk loads nothing from any other host, and a whole CJK font is megabytes
on a Raspberry Pi; the page's words are few (``signage/static/words.js``), so
each font keeps only their glyphs (a few KB). The fonts come from the npm
registry's ``@fontsource`` Noto packages (SIL Open Font License 1.1, the licence
is copied beside them) through ``npm pack``, and are cut with fontTools
(``pip install -e '.[fonts]'``; only this command needs them).

    python -m signage.fonts          # after changing words.js; writes signage/static/fonts/

A browser test per language checks that no glyph on the page falls back to a font
we do not ship (tests/test_display_languages.py).
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
import unicodedata
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
FONTS = STATIC / "fonts"
#: Our family -> (npm package, the package's subset file stem): SC for zh-Hans, TC for zh-Hant.
SOURCES = {
    "SC": ("@fontsource/noto-sans-sc@5.3.0", "noto-sans-sc-chinese-simplified"),
    "TC": ("@fontsource/noto-sans-tc@5.3.0", "noto-sans-tc-chinese-traditional"),
    "KR": ("@fontsource/noto-sans-kr@5.3.0", "noto-sans-kr-korean"),
    "Thai": ("@fontsource/noto-sans-thai@5.3.0", "noto-sans-thai-thai"),
}
WEIGHTS = (400, 700)


def page_text() -> str:
    """Every character the page's words use (outside ASCII, which DejaVu Sans draws), with the parts the
    shaper may split them into (Thai SARA AM under a tone mark is drawn as NIKHAHIT and SARA AA)."""
    text = (STATIC / "words.js").read_text(encoding="utf-8")
    text += unicodedata.normalize("NFKD", text)
    return "".join(sorted({ch for ch in text if ord(ch) > 0x7F}))


def cut(source: Path, target: Path, text: str) -> None:
    """``source`` reduced to the glyphs of ``text``, as WOFF2, written atomically (same bytes every run)."""
    from fontTools import subset  # type: ignore[import-untyped,import-not-found,unused-ignore]  # only here

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    font.recalcTimestamp = False  # the same input gives the same file
    partial = target.with_name(f".{target.name}.partial")
    subset.save_font(font, str(partial), options)
    os.replace(partial, target)


def main() -> int:
    text = page_text()
    with tempfile.TemporaryDirectory() as tmp:
        for family, (package, stem) in SOURCES.items():
            out = subprocess.run(["npm", "pack", "--silent", package], cwd=tmp, check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
            folder = Path(tmp) / family
            with tarfile.open(Path(tmp) / out) as tar:
                tar.extractall(folder, filter="data")
            files = folder / "package" / "files"
            for weight in WEIGHTS:
                cut(files / f"{stem}-{weight}-normal.woff2", FONTS / f"Noto{family}-{weight}.woff2", text)
            licence = (folder / "package" / "LICENSE").read_text(encoding="utf-8")
        notice = FONTS / ".LICENSE-Noto.txt.partial"
        notice.write_text(f"Noto Sans SC, TC, KR and Thai ({', '.join(p for p, _ in SOURCES.values())}), cut "
                          f"to the page's glyphs by signage/fonts.py.\n\n{licence}", encoding="utf-8")
        os.replace(notice, FONTS / "LICENSE-Noto.txt")
    print(f"signage.fonts: {len(text)} characters, fonts in {FONTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
