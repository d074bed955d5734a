"""Image files: written the way every file of ours is written (whole or absent, and private), and read
only when whole.

Why writing: :func:`cv2.imwrite` writes in place with the umask's mode, so a power cut leaves half a JPEG
under the final name (an audit frame the journal names, a deck's template) and another local user
may read a table's camera frames. The image is encoded in memory and handed to
:func:`controller.daemon.private.write_atomic` (temp, fsync, rename, 0600).

Why reading: a JPEG cut short (a copy stopped, a card pulled out mid-write) decodes without an error,
its missing part grey, and libjpeg says only "Premature end of JPEG file" on standard error, naming no
file. A tool that read it would enrol or measure a frame the camera never gave, and the user could not
tell which file to copy again. So :func:`read_image` gives such a file's reason instead of its pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from cv2.typing import MatLike

from controller.daemon.private import write_atomic

#: Photographs wider than this are shrunk as they are read (a 12-megapixel photograph is 36 MB
#: decoded; the recogniser works on a few hundred pixels): memory stays flat whatever the set's size.
READ_WIDTH = 1600

#: Why an image file gives no frame: the words tools print beside its name.
UNDECODABLE = "not an image OpenCV can read"
CUT_SHORT = "a JPEG cut short (no end after its last scan: its missing part would read as grey)"


def write_image(path: Path, image: MatLike, params: Sequence[int] = ()) -> None:
    """``image`` encoded by ``path``'s suffix (``.jpg``, ``.png``; OpenCV's ``params``) and written
    atomically, 0600; OSError naming the file when OpenCV cannot encode it."""
    try:
        ok, data = cv2.imencode(path.suffix, image, list(params))
    except cv2.error as exc:  # no encoder for the suffix, bad params: OpenCV raises rather than returns
        raise OSError(f"cannot encode {path} as {path.suffix or 'an image'}: {exc.err}") from None
    if not ok:
        raise OSError(f"cannot encode {path} as {path.suffix or 'an image'}")
    write_atomic(path, data.tobytes())


def read_image(path: Path) -> MatLike | str:
    """The image file at ``path`` in BGR at its own size, or why it gives none (:data:`UNDECODABLE`,
    :data:`CUT_SHORT`, or the system's reason it cannot be opened)."""
    try:
        with path.open("rb") as f:
            data = f.read()
    except OSError as exc:
        return f"cannot open it: {exc.strerror or exc}"
    if cut_short(data):
        return CUT_SHORT
    # Decoded from the bytes read for the check, not read from disk again (a 12 MP photograph is 5 MB);
    # imdecode applies EXIF's turn as imread does.
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) if data else None
    return UNDECODABLE if image is None else image


def read_frame(path: Path) -> MatLike | str:
    """:func:`read_image`, shrunk to at most :data:`READ_WIDTH` wide: how the vision tools read a set."""
    img = read_image(path)
    if not isinstance(img, str) and img.shape[1] > READ_WIDTH:
        f = READ_WIDTH / img.shape[1]
        img = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    return img


def cut_short(data: bytes) -> bool:
    """Whether JPEG ``data`` ends inside its image: no end-of-image marker (FF D9) after its last start of
    scan (FF DA). Inside a scan, a byte FF is always followed by 00 or a restart marker, so neither marker
    can appear there by chance; a thumbnail's pair comes before the image's scan, a second image appended
    (a phone's depth map) brings its own end. Not a JPEG (no FF D8 first): False, the decoder judges it."""
    return data.startswith(b"\xff\xd8") and data.rfind(b"\xff\xd9") < data.rfind(b"\xff\xda")
