"""The scenes of bench/vision_two_objects.py: two objects in one 640 x 480 frame, drawn from a seed.

Why a module of its own: the drawing is most of the bench; the bench's file keeps to what it measures.
Scene ``(seed, i)`` is drawn by ``numpy.random.default_rng([seed, i])`` (a back's lattice by the
``random.Random`` seeded from it), every draw in the order of the research sweep that first found these
false cards, so a scene named by its seed and number is the same frame on every checkout and in every
note that names it: a draw moved or added before others changes the rest of its scene.

A card of the enrolled (classic) deck and a second object (a card of the same or another drawn design,
a plain card, one with a big pip, a back) side by side, end to end or at an angle; the seam open, closed
or partly by pale paper, a dark line, a dark line with a pale foot; on felt, oak, beige, grey, dark or
pale wood; round one of them a pale wall, a sheet, a glare, a vignette or nothing; either dimmed; in 30 %
of scenes one crosses the frame's edge. The bench puts the repository's root and tests/ on the path.
"""

from __future__ import annotations

import math
import random
from functools import cache

import cv2
import numpy as np
from numpy.typing import NDArray
from vision_tables import BEIGE, FELT, OAK, H, W, at, pale_wood

from controller.cards import DECK, Card
from vision.synth import DESIGNS, FACE_CORNERS, FACE_H, FACE_W, Image, draw_suit, render_back, render_face

Quad = list[tuple[float, float]]
Params = dict[str, object]

#: How many times a scene is drawn again (from the same generator, going on) before it is given up:
#: a layout too large for the frame, or a card pushed out too far, is drawn anew.
ATTEMPTS = 50


def table_top(rng: np.random.Generator, p: Params) -> Image:
    """The table the two objects lie on: felt, oak, beige, grey, dark, dark felt or pale wood."""
    kind = rng.choice(["felt", "oak", "grey", "beige", "pale_wood", "dark", "felt_dark"])
    p["table"] = str(kind)
    if kind == "pale_wood":
        g, r = float(rng.uniform(0.9, 1.3)), float(rng.uniform(0, 0.6))
        p["table_gain"], p["table_ramp"] = g, r
        return pale_wood(BEIGE if rng.random() < 0.5 else OAK, g, r)
    col = {"felt": FELT, "oak": OAK, "beige": BEIGE, "dark": (30, 30, 34),
           "felt_dark": (25, 60, 20)}.get(kind)
    if kind == "grey":
        v = int(rng.integers(70, 150))
        col = (v, v, v)
        p["table_grey"] = v
    return np.full((H, W, 3), col, np.uint8)


def second_object(rng: np.random.Generator, kind: str, card_read: Card) -> tuple[Image, str]:
    """The second object's face (``FACE_W`` x ``FACE_H``) and a line that names it: a card of the
    enrolled design other than ``card_read`` ("classic"), of another drawn design ("design"), a plain
    card, a plain card with one dark pip ("pip": a disc or a suit, as a prop card) or a back."""
    if kind in ("classic", "design"):
        while True:
            card = DECK[int(rng.integers(len(DECK)))]
            if card != card_read:
                break
        design = "classic" if kind == "classic" else str(rng.choice(["bold", "serif", "lefty", "jumbo"]))
        return render_face(card, DESIGNS[design]), f"{card.code}/{design}"
    img = np.full((FACE_H, FACE_W, 3), 250, np.uint8)
    cv2.rectangle(img, (3, 3), (FACE_W - 4, FACE_H - 4), (200, 200, 200), 1)
    if kind == "plain":
        return img, "plain"
    if kind == "pip":
        v = int(rng.integers(10, 70))
        if rng.random() < 0.5:
            r = int(rng.integers(40, 95))
            cv2.circle(img, (FACE_W // 2, FACE_H // 2), r, (v, v, v), -1, lineType=cv2.LINE_AA)
            return img, f"pip circle r{r} v{v}"
        suit = str(rng.choice(list("SCHD")))
        size = int(rng.integers(90, 170))
        colour = (v, v, v) if suit in "SC" else (30, 30, 200)
        draw_suit(img, suit, FACE_W / 2, FACE_H / 2, size, 1.0, colour)
        return img, f"pip {suit} size{size}"
    if kind == "back":
        return render_back(random.Random(int(rng.integers(1 << 30)))), "back"
    raise ValueError(kind)


@cache
def rounded_corners() -> NDArray[np.uint8]:
    """The face's mask, its corners rounded at 12 px (made once)."""
    m = np.zeros((FACE_H, FACE_W), np.uint8)
    cv2.rectangle(m, (0, 0), (FACE_W - 1, FACE_H - 1), 255, -1)
    for x, y in ((0, 0), (FACE_W - 1, 0), (FACE_W - 1, FACE_H - 1), (0, FACE_H - 1)):
        cv2.rectangle(m, (x - 12, y - 12), (x + 12, y + 12), 0, -1)
        cv2.circle(m, (min(max(x, 12), FACE_W - 13), min(max(y, 12), FACE_H - 13)), 12, 255, -1)
    return m


def lay(frame: Image, face: Image, quad: Quad, gain: float) -> None:
    """``face`` warped onto ``quad`` (tl, tr, br, bl) of ``frame``, its light times ``gain``."""
    m = cv2.getPerspectiveTransform(FACE_CORNERS, np.array(quad, np.float32))
    warped = cv2.warpPerspective(face, m, (W, H), flags=cv2.INTER_LINEAR)
    sel = cv2.warpPerspective(rounded_corners(), m, (W, H)) > 127
    frame[sel] = np.clip(warped[sel].astype(np.float32) * gain, 0, 255).astype(np.uint8)


def turned(points: Quad, degrees: float) -> Quad:
    """``points`` turned ``degrees`` about the origin."""
    cs, sn = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return [(x * cs - y * sn, x * sn + y * cs) for x, y in points]


def share_inside(quad: Quad) -> float:
    """The share of ``quad``'s area inside the frame."""
    m = np.zeros((H + 400, W + 400), np.uint8)
    q = np.array(quad, np.float64) + 200
    cv2.fillPoly(m, [np.round(q).astype(np.int32)], 1)
    return float(m[200:200 + H, 200:200 + W].sum()) / max(int(m.sum()), 1)


def wholly_inside(quad: Quad, margin: int = 3) -> bool:
    """Whether every corner of ``quad`` lies ``margin`` px or more inside the frame."""
    q = np.array(quad)
    return bool(q[:, 0].min() >= margin and q[:, 1].min() >= margin and q[:, 0].max() <= W - 1 - margin
                and q[:, 1].max() <= H - 1 - margin)


def wall(quad: Quad, side: int, a: float, b: float,
         o: float) -> tuple[NDArray[np.int32], NDArray[np.float64]]:
    """A pale wall from side ``side`` of ``quad`` (0 top, 1 right, 2 bottom, 3 left) to the frame's edge
    in its outward direction, from ``a`` to ``b`` of the side's length, ``o`` px under the object (so
    the two join), and that outward direction."""
    q = np.array(quad, np.float64)
    p0, p1 = q[side], q[(side + 1) % 4]
    c = q.mean(axis=0)
    d = p1 - p0
    n = np.array([d[1], -d[0]])
    n /= np.linalg.norm(n)
    if np.dot(n, (p0 + p1) / 2 - c) < 0:
        n = -n
    pa, pb = p0 + a * d - o * n, p0 + b * d - o * n
    if abs(n[0]) > abs(n[1]):
        ex = -50 if n[0] < 0 else W + 50
        poly = [pa, pb, (ex, pb[1]), (ex, pa[1])]
    else:
        ey = -50 if n[1] < 0 else H + 50
        poly = [pa, pb, (pb[0], ey), (pa[0], ey)]
    return np.round(np.array(poly)).astype(np.int32), n


def pale(rng: np.random.Generator) -> NDArray[np.float64]:
    """A pale paper's colour (BGR), as bright as a card's or a little less, slightly tinted."""
    return np.clip(float(rng.uniform(165, 242)) + rng.uniform(-12, 12, 3), 0, 255)  # a grey, a tint


def pair(rng: np.random.Generator, layout: str, gap: float, p: Params) -> tuple[Quad, Quad]:
    """The card read's quad about the origin and the second object's ``gap`` px to its right (or its
    nearest corner, at an angle): side by side, end to end (both a quarter turned) or at an angle."""
    if layout == "side":
        w, ta, tb = float(rng.uniform(130, 300)), 0.0, 0.0
    elif layout == "end":
        w, ta, tb = float(rng.uniform(110, 215)), 90.0, 90.0
    else:
        w, ta, tb = float(rng.uniform(120, 260)), 0.0, float(rng.choice([-1, 1]) * rng.uniform(4, 35))
    if rng.random() < 0.3:
        ta += 180
    if rng.random() < 0.3:
        tb += 180
    wb = w * float(rng.uniform(0.9, 1.1)) if rng.random() < 0.5 else w
    h = w * 88 / 63
    qa = at(0, 0, w, ta)
    ax1 = max(x for x, _ in qa)
    qb0 = at(0, 0, wb, tb)
    bx0 = min(x for x, _ in qb0)
    dy = float(rng.uniform(-0.25, 0.25) * h) if rng.random() < 0.6 else float(rng.uniform(-0.03, 0.03) * h)
    if layout == "angle":
        dy = float(rng.uniform(-0.2, 0.2) * h)
    qb = [(x + ax1 - bx0 + gap, y + dy) for x, y in qb0]
    p["w"], p["wb"], p["dy"], p["turn_a"], p["turn_b"] = round(w, 1), round(wb, 1), round(dy, 1), ta, tb
    return qa, qb


def seam_bands(rng: np.random.Generator, seam: str, qa: Quad, qb: Quad,
               p: Params) -> list[tuple[Quad, NDArray[np.float64]]]:
    """What fills the seam between the card's right side and the object's left (polygons and their
    colours): pale paper closing it ("closed") or a part of it ("partly"), a dark line ("line"), a dark
    line with a pale foot ("line_foot"); nothing where the two sides do not face each other."""
    qa_arr, qb_arr = np.array(qa), np.array(qb)
    ra = qa_arr[np.argsort(-qa_arr[:, 0])[:2]]
    ra = ra[np.argsort(ra[:, 1])]  # the card's right side: top, bottom
    lb = qb_arr[np.argsort(qb_arr[:, 0])[:2]]
    lb = lb[np.argsort(lb[:, 1])]  # the object's left side
    top, bot = max(ra[0, 1], lb[0, 1]), min(ra[1, 1], lb[1, 1])
    if bot <= top:
        return []

    def band(y0: float, y1: float) -> Quad:
        """The seam from ``y0`` down to ``y1``, 2 px under each side."""
        xa = [float(np.interp(y, ra[:, 1], ra[:, 0])) - 2 for y in (y0, y1)]
        xb = [float(np.interp(y, lb[:, 1], lb[:, 0])) + 2 for y in (y0, y1)]
        return [(xa[0], y0), (xb[0], y0), (xb[1], y1), (xa[1], y1)]

    pale_v = pale(rng)
    dark_v = float(rng.uniform(30, 120))
    length = bot - top
    if seam == "closed":
        return [(band(top, bot), pale_v)]
    if seam == "partly":
        f, pos = float(rng.uniform(0.1, 0.9)), str(rng.choice(["bottom", "top", "middle"]))
        p["seam_frac"], p["seam_pos"] = round(f, 2), pos
        y0 = {"bottom": bot - f * length, "top": top, "middle": top + (1 - f) * length / 2}[pos]
        fv = float(rng.uniform(120, 200))
        p["seam_fill"] = round(fv, 1)
        return [(band(y0, y0 + f * length), np.full(3, fv))]
    if seam == "line":
        p["seam_dark"] = round(dark_v, 1)
        return [(band(top, bot), np.full(3, dark_v))]
    if seam == "line_foot":
        f = float(rng.uniform(0.08, 0.35))
        p["seam_foot"], p["seam_dark"] = round(f, 2), round(dark_v, 1)
        return [(band(top, bot - f * length), np.full(3, dark_v)), (band(bot - f * length, bot), pale_v)]
    return []


def place(rng: np.random.Generator, layout: str, shapes: list[Quad], p: Params) -> list[Quad] | None:
    """``shapes`` (the card, the object, the seam's bands) turned a little (or a quarter, end to end),
    moved into the frame or, in 30 % of scenes, so that one object crosses its edge by 10 to 45 %, then
    seen at a slant; None when they do not fit the frame."""
    vertical = layout == "end" and rng.random() < 0.5
    turn = float(rng.uniform(-8, 8)) + (90 if vertical else 0)
    p["turn"] = round(turn, 2)
    pts = [turned(q, turn) for q in shapes]
    allp = np.array([pt for q in pts[:2] for pt in q])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    span = hi - lo
    out = rng.random() < 0.3
    p["out"] = out
    if out:
        axis, other = (1, 0) if vertical else (0, 1)  # the pair's long axis, and across it
        lim, olim = (W, H)[axis], (W, H)[other]
        which, share = int(rng.integers(2)), float(rng.uniform(0.1, 0.45))
        along = np.array(pts[which])[:, axis]
        off = np.zeros(2)
        off[other] = (rng.uniform(-lo[other] + 4, max(-lo[other] + 4, olim - 4 - hi[other]))
                      if span[other] < olim - 8 else (olim - span[other]) / 2 - lo[other])
        if along.mean() < np.array(pts[1 - which])[:, axis].mean():  # the outer one along the axis
            off[axis] = -along.min() - share * (along.max() - along.min())
        else:
            off[axis] = lim - along.max() + share * (along.max() - along.min())
        p["out_card"] = "classic" if which == 0 else "other"
        p["out_share"] = round(share, 2)
    else:
        if span[0] > W - 8 or span[1] > H - 8:
            return None
        off = np.array([rng.uniform(-lo[0] + 4, W - 4 - hi[0]), rng.uniform(-lo[1] + 4, H - 4 - hi[1])])
    pts = [[(x + off[0], y + off[1]) for x, y in q] for q in pts]
    persp = float(rng.choice([0, 0, 10, 20, 35]))
    p["persp"] = persp
    if persp > 0:
        src = np.array([(0, 0), (W, 0), (W, H), (0, H)], np.float32)
        m = cv2.getPerspectiveTransform(src, src + rng.uniform(-persp, persp, (4, 2)).astype(np.float32))
        pts = [[(x, y) for x, y in cv2.perspectiveTransform(np.array(q, np.float32).reshape(-1, 1, 2), m)
                .reshape(-1, 2).tolist()] for q in pts]
    return pts


def surround(rng: np.random.Generator, frame: Image, kind: str, target: Quad, beside: Quad,
             p: Params) -> None:
    """Pale walls (one to three) from the outer sides of ``target`` (those not facing ``beside``) to the
    frame's edge, or a sheet under it reaching the edge on three sides, joining it to the edge."""
    if not (kind.startswith("wall") or kind == "sheet"):
        return
    c_o = np.array(beside).mean(axis=0)
    outer = []
    for s in range(4):
        _, n = wall(target, s, 0, 1, 0)
        mid = (np.array(target[s]) + np.array(target[(s + 1) % 4])) / 2
        if np.dot(n, c_o - mid) <= 0.3 * np.linalg.norm(c_o - mid):
            outer.append(s)
    nsides = {"wall": 1, "wall_glare": 1, "wall2": 2, "wall3": 3, "sheet": 3}[kind]
    sides = [int(s) for s in rng.permutation(outer)[:nsides]]
    col = pale(rng)
    grad = float(rng.uniform(-25, 25))
    p["wall_sides"], p["wall_value"] = sides, [round(float(c), 1) for c in col]
    p["wall_grad"] = round(grad, 1)
    wmask = np.zeros((H, W), np.uint8)
    for s in sides:
        a = float(rng.choice([-4.0, 0.0, 0.15])) if kind != "sheet" else -4.0
        b = float(rng.choice([0.7, 1.0, 5.0])) if kind != "sheet" else 5.0
        poly, _ = wall(target, s, a, b, float(rng.uniform(0.5, 4)))
        cv2.fillPoly(wmask, [poly], 255)
    if kind == "sheet":
        cv2.fillPoly(wmask, [np.round(np.array(target)).astype(np.int32)], 255)
    yy = np.linspace(-1, 1, H, dtype=np.float32)[:, None, None]
    paper = np.broadcast_to(np.clip(col[None, None, :] + grad * yy, 0, 255), (H, W, 3))
    frame[wmask > 0] = paper[wmask > 0].astype(np.uint8)


def light(rng: np.random.Generator, frame: Image, kind: str, target: Quad, p: Params) -> Image:
    """A glare from a corner of ``target`` towards the nearest frame edge ("glare", "wall_glare"), or a
    bright ramp from the frame edge nearest it ("vignette"): light that joins the object to the edge."""
    if kind not in ("glare", "wall_glare", "vignette"):
        return frame
    spot: Image = np.zeros((H, W), np.float32)
    if kind == "vignette":
        c = np.array(target).mean(axis=0)
        e = int(np.argmin([c[0], W - c[0], c[1], H - c[1]]))
        p["vignette_edge"] = ["left", "right", "top", "bottom"][e]
        ext = float(rng.uniform(0.25, 0.6)) * (W if e < 2 else H)
        coord = np.arange(W if e < 2 else H, dtype=np.float32)
        ramp = np.clip(1 - (coord if e in (0, 2) else coord[::-1]) / ext, 0, 1) ** 1.5
        spot = np.broadcast_to(ramp[None, :], (H, W)) if e < 2 else np.broadcast_to(ramp[:, None], (H, W))
        amp = float(rng.uniform(120, 230))
    else:
        (cx, cy), r = target[int(rng.integers(4))], float(rng.uniform(60, 220))
        ccx, ccy = (0 if cx < W / 2 else W), (0 if cy < H / 2 else H)  # the nearest frame edge's corner
        t = float(rng.uniform(0, 0.7))
        gx, gy = cx + t * (ccx - cx), cy + t * (ccy - cy)
        cv2.circle(spot, (int(gx), int(gy)), int(r), 1.0, -1)
        spot = cv2.GaussianBlur(spot, (0, 0), float(rng.uniform(4, 14)))
        amp = float(rng.uniform(150, 235))
        p["glare"] = [round(gx), round(gy), round(r)]
    p["glare_amp"] = round(amp, 1)
    lit: Image = np.clip(frame + spot[..., None] * amp, 0, 255).astype(np.uint8)
    return lit


def camera(rng: np.random.Generator, frame: Image, p: Params) -> Image:
    """The camera's blur and sensor noise (none in half the scenes each)."""
    noise, blur = float(rng.choice([0, 0, 2, 4])), float(rng.choice([0, 0, 0.8, 1.2]))
    p["noise"], p["blur"] = noise, blur
    if blur:
        frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), blur), np.uint8)
    if noise:
        frame = np.clip(frame + rng.normal(0, noise, frame.shape), 0, 255).astype(np.uint8)
    return frame


def scene(seed: int, i: int) -> tuple[Image | None, Params]:
    """Scene ``i`` of ``seed``: the frame and its parameters (the frame None, and ``failed`` among the
    parameters, when no attempt fitted the frame)."""
    rng = np.random.default_rng([seed, i])
    for attempt in range(ATTEMPTS):
        p: Params = {"seed": seed, "i": i, "attempt": attempt}
        frame = table_top(rng, p)
        layout = str(rng.choice(["side", "side", "end", "angle"]))
        p["layout"] = layout
        kind = str(rng.choice(["classic", "design", "plain", "pip", "pip", "back"]))
        p["b_kind"] = kind
        card = DECK[int(rng.integers(len(DECK)))]
        face_a = render_face(card, DESIGNS["classic"])
        face_b, named = second_object(rng, kind, card)
        p["a"], p["b"] = card.code, named
        gap = float(rng.choice([0, 0, 1, 2, 3, 4, 6, 8, 12]) + rng.uniform(0, 1))
        p["gap"] = round(gap, 2)
        qa, qb = pair(rng, layout, gap, p)
        seam = str(rng.choice(["open", "closed", "partly", "line", "line_foot"]))
        p["seam"] = seam
        bands = seam_bands(rng, seam, qa, qb, p) if gap > 0.3 or layout == "angle" else []
        swap = bool(rng.random() < 0.5)  # the card read on the right, the object on its left
        p["classic_on"] = "right" if swap else "left"
        if swap:  # mirrored, each quad's corners reordered to stay clockwise (the print unmirrored)
            qa, qb = ([(-x, y) for x, y in (q[1], q[0], q[3], q[2])] for q in (qa, qb))
            bands = [([(-x, y) for x, y in band], v) for band, v in bands]
        pts = place(rng, layout, [qa, qb] + [band for band, _ in bands], p)
        if pts is None:
            continue
        qa, qb = pts[0], pts[1]
        if share_inside(qa) < 0.45 or share_inside(qb) < 0.45:
            continue
        if p["out"] == (wholly_inside(qa) and wholly_inside(qb)):  # pushed out yet inside, or not yet out
            continue
        p["classic_inside"], p["other_inside"] = wholly_inside(qa), wholly_inside(qb)
        sur = str(rng.choice(["none", "wall", "wall", "wall2", "wall3", "sheet", "glare", "vignette",
                              "wall_glare"]))
        p["surround"] = sur
        target = int(rng.integers(2))
        p["surround_on"] = "classic" if target == 0 else "other"
        tq = [qa, qb][target]
        surround(rng, frame, sur, tq, [qa, qb][1 - target], p)
        for k, (_, v) in enumerate(bands):
            cv2.fillPoly(frame, [np.round(np.array(pts[2 + k])).astype(np.int32)],
                         tuple(float(c) for c in np.broadcast_to(v, 3)), lineType=cv2.LINE_AA)
        gain_a, gain_b = float(rng.uniform(0.8, 1.05)), float(rng.uniform(0.8, 1.05))
        dim = str(rng.choice(["none", "none", "classic", "other"]))
        if dim == "classic":
            gain_a = float(rng.uniform(0.5, 0.8))
        elif dim == "other":
            gain_b = float(rng.uniform(0.4, 0.8))
        p["gain_a"], p["gain_b"], p["dim"] = round(gain_a, 3), round(gain_b, 3), dim
        lay(frame, face_a, qa, gain_a)
        lay(frame, face_b, qb, gain_b)
        frame = camera(rng, light(rng, frame, sur, tq, p), p)
        p["quad_classic"] = [[round(x, 1), round(y, 1)] for x, y in qa]
        p["quad_other"] = [[round(x, 1), round(y, 1)] for x, y in qb]
        return frame, p
    return None, {"seed": seed, "i": i, "failed": True}
