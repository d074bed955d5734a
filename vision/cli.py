"""``croupier vision``: enrol a deck, test a deck profile on labelled frames, calibrate the scan window,
make synthetic scenes.

OpenCV is imported when one of these commands runs, never when ``croupier``
itself starts, so the other commands work without the ``vision`` extra.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from controller.daemon.private import make_dir, write_atomic
from controller.digits import whole_number
from controller.tools.progress import progress

T = TypeVar("T", int, float)

#: The frame size ``--camera-size`` asks a camera for unless told: the table file's camera section's own
#: default width and height (:class:`controller.daemon.camera_config.CameraSpec`; a test holds them
#: equal), so a profile enrolled or a window calibrated on the defaults is read at the daemon's size.
#: Written here, not read from there: that module loads pydantic, which ``croupier``'s start need not.
CAMERA_SIZE = "640x480"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "vision",
        help="camera card recognition: enrol a deck, test it, calibrate the window (docs/vision.md)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    vs = p.add_subparsers(dest="vision_command", required=True, metavar="ACTION")

    e = vs.add_parser("enroll", help="enrol the house's deck from photographs or a camera, with a self-check")
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--images",
        type=Path,
        action="append",
        help="folder of face photographs (QH.png, 10d-2.jpg, or labels.csv); repeat it to add a folder "
        "of more photographs (of one card or several): every photograph of a card is combined",
    )
    src.add_argument(
        "--camera",
        help="a camera (index or /dev/videoN) or a folder/video to replay: "
        "shows a prompt for each of the 52 cards",
    )
    e.add_argument("--labels", type=Path, help="a file,card CSV naming the images, for every --images folder "
                   "(default: each folder's own labels.csv)")
    e.add_argument(
        "--out", type=Path, required=True, help="the profile to write (firmware_configs/decks/NAME.yaml)"
    )
    e.add_argument("--name", help="the deck's name (default: the file name)")
    e.add_argument("--shots", type=int, default=1, help="with --camera: photographs per card (default 1)")
    e.add_argument("--camera-size", default=CAMERA_SIZE, help="with --camera: the frame size WxH asked for, "
                   f"the table file's camera width and height (default {CAMERA_SIZE}, as theirs)")
    e.add_argument(
        "--no-prompt",
        action="store_true",
        help="with --camera: do not wait for Enter, take each card as soon as it reads steadily",
    )
    e.set_defaults(func=refusing("enroll", run_enroll))

    t = vs.add_parser(
        "test", help="read a folder of labelled frames (labels.csv: file,card or none) and report"
    )
    t.add_argument(
        "folder", type=Path, help="a folder of frames with labels.csv (file,card; card 'none' for no card)"
    )
    t.add_argument(
        "--deck", type=Path, help="the deck profile (default: the only one in firmware_configs/decks)"
    )
    t.add_argument("--json", type=Path, help="also write the full JSON report here ('-' for standard output)")
    t.add_argument("--table", type=Path, help="read each frame as this table file's camera does: through its "
                   "scan_window, with its deck unless --deck names one")
    t.set_defaults(func=refusing("test", run_test))

    c = vs.add_parser(
        "calibrate",
        help="the scan window's outline and the table's plane from one frame: prints the table file's "
        "camera.scan_window",
    )
    frame = c.add_mutually_exclusive_group(required=True)
    frame.add_argument("--image", type=Path, help="a frame from the table's camera, as it is mounted")
    frame.add_argument("--camera", help="take one frame from this camera (index or /dev/videoN)")
    c.add_argument("--camera-size", default=CAMERA_SIZE,
                   help="with --camera: the frame size WxH asked for, the table file's camera width and "
                   f"height (default {CAMERA_SIZE}, as theirs)")
    c.add_argument(
        "--corners",
        help="the window's corners in that frame, in pixels, clockwise from its top-left: 'x,y x,y x,y x,y' "
        "(read them off the frame in any image viewer); they become the mask",
    )
    c.add_argument("--size-mm", help="the window's real width and height in mm (WxH): calibrates the plane")
    c.add_argument(
        "--marker", type=float, metavar="MM", help="calibrate the plane from a printed ArUco 4x4 marker of "
        "this side (mm) lying flat in the window"
    )
    c.set_defaults(func=refusing("calibrate", run_calibrate))

    s = vs.add_parser("scenes", help="write synthetic scan-window frames and their labels.csv")
    s.add_argument("folder", type=Path, help="where to write the frames and labels.csv")
    s.add_argument("--enrol", action="store_true", help="one near-studio photograph of each of the 52 faces")
    s.add_argument("--count", type=int, default=520, help="frames with a card (default 520)")
    s.add_argument("--negatives", type=int, default=0, help="frames without a card (empty, back, joker, ...)")
    s.add_argument(
        "--design", default="classic", help="the deck design to draw (classic, bold, serif, lefty, jumbo)"
    )
    s.add_argument(
        "--seed", type=int, default=1, help="the scenes' seed: the same seed writes the same frames"
    )
    s.add_argument("--size", default="640x480", help="frame size WxH (default 640x480)")
    s.set_defaults(func=refusing("scenes", run_scenes))


class OptionError(ValueError):
    """An option's value the command cannot use: refused with exit 2, named by the option."""


def _size(text: str, option: str, kind: Callable[[str], T] = int) -> tuple[T, T]:
    """``WxH`` as two finite numbers above 0; else :class:`OptionError` naming ``option``."""
    w, _, h = text.lower().partition("x")
    try:
        size = kind(w), kind(h)
    except ValueError:
        size = None
    if size is None or not all(math.isfinite(v) and v > 0 for v in size):
        raise OptionError(f"{option} {text!r}: expected WxH, both above 0, such as 640x480")
    return size


def refusing(command: str, run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` with an :class:`OptionError` said as ``croupier vision COMMAND: ...`` and exit 2, as the
    commands' other refusals."""
    def guarded(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except OptionError as exc:
            print(f"croupier vision {command}: {exc}", file=sys.stderr)
            return 2
    return guarded


def run_calibrate(args: argparse.Namespace) -> int:
    from vision.calibrate import CalibrationError, calibrate, parse_points

    if args.image is not None:
        from vision.image_file import read_image

        frame: Any = read_image(args.image)  # its own size: --corners are its pixels
        if isinstance(frame, str):
            print(f"croupier vision calibrate: {args.image}: {frame}", file=sys.stderr)
            return 2
    else:
        from vision.sources import CaptureSource, SourceError

        try:
            index = whole_number(args.camera, 3)
            source = CaptureSource(args.camera if index is None else index,
                                   *_size(args.camera_size, "--camera-size"))
        except SourceError as exc:
            print(f"croupier vision calibrate: {exc}", file=sys.stderr)
            return 2
        frame = source.read()
        source.close()
        if frame is None:
            print(f"croupier vision calibrate: camera {args.camera!r} gave no frame", file=sys.stderr)
            return 2
    try:
        size = None if args.size_mm is None else _size(args.size_mm, "--size-mm", float)
        corners = None if args.corners is None else parse_points(args.corners)
        result = calibrate(frame, corners, size, args.marker)
    except CalibrationError as exc:
        print(f"croupier vision calibrate: {exc}", file=sys.stderr)
        return 2
    for line in result.report():
        print(f"# {line}")
    print("# add under the table file's camera section:")
    print(result.snippet())
    return 0


def run_scenes(args: argparse.Namespace) -> int:
    from vision.dataset import write_enrolment_set, write_test_set
    from vision.synth import DESIGNS

    if args.count < 0 or args.negatives < 0:
        raise OptionError("--count and --negatives are numbers of frames, 0 or more")
    if args.design not in DESIGNS:
        raise OptionError(f"no design {args.design!r}; designs: {', '.join(DESIGNS)}")
    size = _size(args.size, "--size")
    if args.enrol:
        n = write_enrolment_set(args.folder, DESIGNS[args.design], args.seed, size)
    else:
        n = write_test_set(args.folder, DESIGNS[args.design], args.seed, args.count, args.negatives, size)
    print(f"{n} frames and labels.csv in {args.folder}")
    return 0


def run_enroll(args: argparse.Namespace) -> int:

    from vision.enroll import EnrolError, enrol, labelled_images
    from vision.profile import save_profile

    name = args.name or args.out.stem
    if (why := unwritable(args.out)) is not None:  # said before the photographs are read, not after
        print(f"croupier vision enroll: --out {args.out}: {why}", file=sys.stderr)
        return 2
    try:
        if args.images is not None:
            def warn(text: str) -> None:
                print(f"  warning: {text}")

            files = [item for folder in args.images for item in labelled_images(folder, args.labels, warn)]
            shots: Iterable[tuple[Any, Any, str]] = _read_shots(files)
        else:
            from vision.capture_enrol import shoot_deck

            shots = shoot_deck(
                args.camera,
                args.out.with_name(args.out.stem + "-shots"),
                args.shots,
                prompt=not args.no_prompt,
                size=_size(args.camera_size, "--camera-size"),
            )
        result = enrol(shots, name)
    except EnrolError as exc:
        print(f"croupier vision enroll: {exc}", file=sys.stderr)
        return 2
    for warning in result.warnings:
        print(f"  warning: {warning}")
    for problem in result.problems:
        print(f"  problem: {problem}")
    if not result.ok or result.profile is None:
        order = sorted(result.reshoot, key=lambda c: (c[:-1], c[-1]))
        print(
            f"croupier vision enroll: the profile failed its self-check; nothing written. "
            f"Re-shoot: {' '.join(order) or '(see the problems above)'} "
            "(run it again with another --images FOLDER holding the new photographs)",
            file=sys.stderr,
        )
        return 1
    try:
        make_dir(args.out.parent)
        folder = save_profile(result.profile, args.out)
    except OSError as exc:  # a disk full, a folder made read-only meanwhile: the profile on disk as it was
        print(f"croupier vision enroll: cannot write {args.out}: {exc.strerror or exc}; the profile there "
              "(if any) is as it was", file=sys.stderr)
        return 2
    idx = result.profile.spec.index
    print(
        f"enrolled deck {name!r} from {result.images} photographs: index in the {idx.corner} corner, "
        f"box {idx.box}; every face reads as itself; wrote {args.out} and {folder}/"
    )
    return 0


def _read_shots(files: list[tuple[Path, Any]]) -> Iterator[tuple[Any, Any, str]]:
    """Each labelled photograph, read when it is needed and shrunk (:func:`vision.image_file.read_frame`),
    with progress; named by its file, and its folder's name where photographs come from more than one. One
    that gives no image is why: the enrolment sets it aside, named, as any unusable photograph."""
    from vision.image_file import read_frame

    folders = len({path.parent for path, _ in files})
    for done, (path, card) in enumerate(files, 1):
        img = read_frame(path)
        progress("photographs", done, len(files))
        yield img, card, path.name if folders == 1 else f"{path.parent.name}/{path.name}"


def unwritable(path: Path) -> str | None:
    """Why a file cannot be written at ``path``, or None: checked before a long job, so that a wrong
    ``--out`` or ``--json`` costs a second, not the job. Nothing is made: the nearest folder there is,
    of the path's own folder or its parents, must take a file (a probe made there and removed: the only
    sure test, as root passes every access check); a missing folder is made when the file is written."""
    if path.is_dir():
        return "is a folder: name the file to write"
    there = path.parent.absolute()
    while not there.exists() and there != there.parent:
        there = there.parent
    if not there.is_dir():
        return f"{there} is not a folder"
    import os
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(dir=there, prefix=".croupier-probe-")
    except OSError as exc:
        return f"cannot write in {there}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(probe)
    return None


def table_camera(path: Path) -> tuple[Any, Path]:
    """A table file's scan window (None: the whole frame) and deck profile, as its camera reads frames."""
    from controller.daemon.config import TableFileError, load_table
    from vision.window import ScanWindow

    try:
        camera = load_table(path).camera
    except TableFileError as exc:
        raise OptionError(f"--table: {exc}") from None
    if camera is None:
        raise OptionError(f"--table {path}: the table file has no camera section")
    return ScanWindow.of(camera.spec.scan_window), camera.deck_path


def default_deck() -> Path | None:
    from controller.daemon.config import FIRMWARE_CONFIGS

    decks = sorted((FIRMWARE_CONFIGS / "decks").glob("*.yaml"))
    return decks[0] if len(decks) == 1 else None


def _test_frames(folder: Path, rows: list[tuple[int, str, Any]], unreadable: list[str],
                 ) -> Iterator[tuple[Any, Any, str]]:
    """The labelled frames one at a time (read, shrunk, read by the recogniser, let go), with progress. A file
    OpenCV cannot decode is named in ``unreadable`` and passed over: the rest of a long run is not lost."""
    from vision.image_file import read_frame

    for done, (lineno, file, card) in enumerate(rows, 1):
        img = read_frame(folder / file)
        progress("frames", done, len(rows))
        if isinstance(img, str):
            unreadable.append(f"{folder / 'labels.csv'}: line {lineno}: cannot read the image {file}: {img}")
            continue
        yield img, card, file


def run_test(args: argparse.Namespace) -> int:
    from vision.dataset import DatasetError, labelled_rows
    from vision.evaluate import evaluate, summary
    from vision.profile import ProfileError, load_profile

    window, table_deck = table_camera(args.table) if args.table is not None else (None, None)
    deck = args.deck or table_deck or default_deck()
    if deck is None:
        print("croupier vision test: name the deck profile with --deck", file=sys.stderr)
        return 2
    to_stdout = args.json is not None and str(args.json) == "-"
    if args.json is not None and not to_stdout and (why := unwritable(args.json)) is not None:
        print(f"croupier vision test: --json {args.json}: {why}", file=sys.stderr)
        return 2
    try:
        profile = load_profile(deck)
        if not args.folder.is_dir():
            raise DatasetError(f"{args.folder}: not a folder")
        rows = labelled_rows(args.folder)
        if not rows:
            raise DatasetError(f"{args.folder / 'labels.csv'}: no frames listed: nothing to test")
        unreadable: list[str] = []
        report: dict[str, Any] = {
            "deck": str(deck),
            "folder": str(args.folder),
            **evaluate(_test_frames(args.folder, rows, unreadable), profile, window),
            "unreadable": unreadable,
        }
    except (ProfileError, DatasetError) as exc:
        print(f"croupier vision test: {exc}", file=sys.stderr)
        return 2
    if not report["frames"]:  # every file listed undecodable: no report of nothing
        for line in unreadable:
            print(f"croupier vision test: {line}", file=sys.stderr)
        print(f"croupier vision test: {args.folder}: no frame could be read: nothing to report",
              file=sys.stderr)
        return 2
    # With --json -, standard output is the JSON alone (for a pipe), the summary on standard error.
    print(summary(report), file=sys.stderr if to_stdout else sys.stdout)
    if args.json is not None:
        text = json.dumps(report, indent=2)
        if to_stdout:
            print(text)
        else:
            try:
                make_dir(args.json.parent)
                write_atomic(args.json, text + "\n")
            except OSError as exc:
                reason = exc.strerror or exc
                print(f"croupier vision test: cannot write {args.json}: {reason}", file=sys.stderr)
                return 2
            print(f"JSON report: {args.json}")
    for line in unreadable:
        print(f"croupier vision test: {line} (not counted)", file=sys.stderr)
    return 2 if unreadable else 0
