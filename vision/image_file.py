"""Write an image file the way every file of ours is written: whole or absent, and private.

Why: :func:`cv2.imwrite` writes in place with the umask's mode, so a power cut leaves half a JPEG
under the final name (an audit frame the journal names, a deck's template) and another local user
may read a table's camera frames. The image is encoded in memory and handed to
:func:`controller.daemon.private.write_atomic` (temp, fsync, rename, 0600).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
from cv2.typing import MatLike

from controller.daemon.private import write_atomic


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
