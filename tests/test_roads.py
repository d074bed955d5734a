"""Roads cell by cell on hand-made shoes (docs/roads.md), and properties on random shoes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from signage.roads import ROWS, Result, compute, derived_marks, grid_text, lay_out, logical_columns, preview
from signage.roads_contract import results as shoe  # B, P, T; '+' a Banker pair, '*' a Player pair


def test_bead_plate_columns_of_six_with_ties_and_pairs() -> None:
    roads = compute(shoe("BPTB+P*BPB"))
    cells = [(c.row, c.col, c.colour, c.banker_pair, c.player_pair) for c in roads.bead_plate]
    assert cells == [
        (0, 0, "red", False, False),
        (1, 0, "blue", False, False),
        (2, 0, "green", False, False),
        (3, 0, "red", True, False),
        (4, 0, "blue", False, True),
        (5, 0, "red", False, False),
        (0, 1, "blue", False, False),
        (1, 1, "red", False, False),
    ]


def test_big_road_streaks_and_tie_marks() -> None:
    roads = compute(shoe("BBPTTPBTB"))
    # B B | P (2 ties) P | B (1 tie) B: the ties mark the circle they follow
    assert grid_text(roads.big_road, tie_marks=True) == ["Bpb", "BPB", "...", "...", "...", "..."]
    ties = {(c.row, c.col): c.ties for c in roads.big_road}
    assert ties == {(0, 0): 0, (1, 0): 0, (0, 1): 2, (1, 1): 0, (0, 2): 1, (1, 2): 0}


def test_ties_before_the_first_result_go_on_the_first_circle() -> None:
    roads = compute(shoe("TTTP"))
    assert [(c.row, c.col, c.colour, c.ties) for c in roads.big_road] == [(0, 0, "blue", 3)]
    assert compute(shoe("TT")).big_road == []  # no circle yet: nothing drawn
    assert len(compute(shoe("TT")).bead_plate) == 2


def test_a_tie_rounds_pairs_are_on_the_bead_plate_only() -> None:
    """The rules leave it open (docs/roads.md, "Big road"): the circle a tie's slash goes on is an earlier
    round's, and its dots are that round's own pairs."""
    roads = compute(shoe("BT+P"))
    assert [(c.colour, c.banker_pair) for c in roads.bead_plate] == [
        ("red", False), ("green", True), ("blue", False)]
    assert [(c.colour, c.ties, c.banker_pair, c.player_pair) for c in roads.big_road] == [
        ("red", 1, False, False), ("blue", 0, False, False)]


def test_long_dragon_turns_right_along_the_bottom_row() -> None:
    roads = compute(shoe("BBBBBBBBBP"))
    assert grid_text(roads.big_road) == ["BP..", "B...", "B...", "B...", "B...", "BBBB"]
    # the next column starts at display column 1, right of the first column's top
    cols, _ = logical_columns(shoe("BBBBBBBBBP"))
    assert [len(c) for c in cols] == [9, 1]


def test_a_tail_turns_under_another_tail() -> None:
    # A 7-long Banker dragon (tail on row 6), then a 7-long Player streak: its column 1 has
    # rows 1..5 free, row 6 is taken by the dragon's tail, so it turns right at row 5.
    roads = compute(shoe("BBBBBBB" + "PPPPPPP" + "B"))
    assert grid_text(roads.big_road) == [
        "BPB.",
        "BP..",
        "BP..",
        "BP..",
        "BPPP",
        "BB..",
    ]


def test_lay_out_of_a_column_that_meets_a_tail_at_the_top() -> None:
    placed = lay_out([[1] * 8, [2] * 7, [3] * 2, [4]])
    grid = {(r, c): v for r, c, v in placed}
    assert grid[(5, 2)] == 1 and grid[(4, 3)] == 2  # second column's tail above the first's
    assert grid[(0, 2)] == 3 and grid[(1, 2)] == 3
    assert grid[(0, 3)] == 4


def test_each_cell_names_its_streak_even_along_a_dragon_tail() -> None:
    roads = compute(shoe("BBBBBBBBBPTB"))
    # the tail's cells sit in display columns 1..3 but belong to streak 0; P is streak 1, B streak 2
    assert [(c.row, c.col, c.streak) for c in roads.big_road] == [
        *((r, 0, 0) for r in range(6)), (5, 1, 0), (5, 2, 0), (5, 3, 0), (0, 1, 1), (0, 2, 2)]
    assert [(c.colour, c.streak) for c in compute(shoe("BBPBBBPP")).big_eye_boy] == [
        ("blue", 0), ("blue", 0), ("red", 1), ("blue", 2), ("red", 3)]
    assert all(c.streak is None for c in roads.bead_plate)  # the bead plate has no streaks
    assert roads.big_road[7].to_dict()["streak"] == 0


def test_big_eye_boy_by_hand() -> None:
    # Big road columns: B B | P | B B B | P P
    # lengths [2, 1, 3, 2]. Big Eye Boy (k=1) starts at (2,2) or else (3,1): column 2 has
    # one row, so it starts at (3,1).
    # (3,1): len(2)=1 vs len(1)=2 -> blue. (3,2): len(2)=1 == r-1=1 -> blue. (3,3): len(2)=1 != 2 -> red.
    # (4,1): len(3)=3 vs len(2)=1 -> blue. (4,2): len(3)=3 != 1 -> red.
    assert derived_marks([2, 1, 3, 2], 1) == [["blue", "blue"], ["red"], ["blue"], ["red"]]
    roads = compute(shoe("BBPBBBPP"))
    assert grid_text(roads.big_eye_boy) == ["PBPB", "P...", "....", "....", "....", "...."]  # B: red, P: blue
    assert [c.colour for c in roads.big_eye_boy] == ["blue", "blue", "red", "blue", "red"]


def test_small_road_and_cockroach_pig_by_hand() -> None:
    # lengths [1, 2, 1, 1, 3]: small road (k=2) starts at (3,2) -- column 3 has no row 2 -- so at (4,1).
    # (4,1): len(3)=1 vs len(1)=1 -> red. (5,1): len(4)=1 vs len(2)=2 -> blue.
    # (5,2): len(3)=1 == 1 -> blue. (5,3): len(3)=1 != 2 -> red.
    assert derived_marks([1, 2, 1, 1, 3], 2) == [["red"], ["blue", "blue"], ["red"]]
    # Cockroach pig (k=3) starts at (4,2) or (5,1): (5,1): len(4)=1 vs len(1)=1 -> red.
    # (5,2): len(2)=2 != 1 -> red. (5,3): len(2)=2 == 2 -> blue.
    assert derived_marks([1, 2, 1, 1, 3], 3) == [["red", "red"], ["blue"]]
    roads = compute(shoe("B" + "PP" + "B" + "P" + "BBB"))
    assert [c.colour for c in roads.small_road] == ["red", "blue", "blue", "red"]
    assert [c.colour for c in roads.cockroach_pig] == ["red", "red", "blue"]


def test_derived_road_starts_at_row_two_of_column_k_plus_one() -> None:
    # lengths [1, 2]: Big Eye Boy starts at (2,2): len(1)=1 == r-1=1 -> blue.
    assert derived_marks([1, 2], 1) == [["blue"]]
    assert derived_marks([1, 1], 1) == []  # (2,1) is before the start; (3,1) does not exist yet


def test_derived_roads_use_true_lengths_not_the_wrapped_grid() -> None:
    # A 7-long dragon then a 6-long streak: Big Eye Boy starts at (2,2); rows 2..6 of column 2 are
    # red (len(1)=7 is never r-1 there); then (3,1): len(2)=6 vs len(1)=7 -> blue. On the wrapped
    # 6-row grid both columns would look 6 long and give red: the true lengths decide.
    assert derived_marks([7, 6, 1], 1) == [["red"] * 5, ["blue"]]
    # A 9-long dragon, then 1, 1: column 2 has no row 2, so the road starts at (3,1): 1 vs 9 -> blue.
    assert derived_marks([9, 1, 1], 1) == [["blue"]]


def test_ask_road_previews_each_derived_road() -> None:
    results = shoe("BBPBBBPP")  # lengths [2, 1, 3, 2]
    ask = compute(results).ask
    # next Banker: new column 5, (5,1): BEB len(4)=2 vs len(3)=3 -> blue; SR len(4)=2 vs len(2)=1 -> blue;
    # CP len(4)=2 vs len(1)=2 -> red.
    assert ask["banker"] == {"big_eye_boy": "blue", "small_road": "blue", "cockroach_pig": "red"}
    # next Player: (4,3): BEB len(3)=3 != 2 -> red; SR len(2)=1 != 2 -> red; CP len(1)=2 == 2 -> blue.
    assert ask["player"] == {"big_eye_boy": "red", "small_road": "red", "cockroach_pig": "blue"}
    # A road not started yet has a mark when the next result starts it (docs/roads.md, "Ask road"):
    # after B P, Big Eye Boy starts at column 2's row 2 or column 3's row 1.
    assert compute(shoe("BP")).big_eye_boy == []
    assert compute(shoe("BP")).ask["banker"]["big_eye_boy"] == "red"
    assert compute(shoe("BP")).ask["player"]["big_eye_boy"] == "blue"
    assert compute(shoe("B")).ask["banker"] == {
        "big_eye_boy": None,
        "small_road": None,
        "cockroach_pig": None,
    }
    for winner in ("banker", "player"):  # the preview is what the road then shows
        after = compute([*results, Result(winner)])  # type: ignore[arg-type]
        assert after.big_eye_boy[-1].colour == ask[winner]["big_eye_boy"]
        assert after.cockroach_pig[-1].colour == ask[winner]["cockroach_pig"]


def test_the_would_be_mark_is_shown_where_it_would_go() -> None:
    # A 7-long Banker dragon, then a 7-long Player streak turned at row 5 under the tail (the test above)
    where = preview(shoe("BBBBBBB" + "PPPPPPP"))
    big = {w: cells["big_road"] for w, cells in where.items()}
    # a next Player runs on along row 5 (its tail); a next Banker starts display column 2, the third streak
    assert big["player"] is not None and (big["player"].row, big["player"].col) == (4, 4)
    assert big["banker"] is not None and (big["banker"].row, big["banker"].col) == (0, 2)
    assert (big["player"].colour, big["player"].streak) == ("blue", 1)
    assert (big["banker"].colour, big["banker"].streak) == ("red", 2)
    # the derived roads: the colour of the ask road, at the place the road then shows it
    results = shoe("BBPBBBPP")
    ask = compute(results).ask
    for winner in ("banker", "player"):
        after = compute([*results, Result(winner)])  # type: ignore[arg-type]
        for road in ("big_eye_boy", "small_road", "cockroach_pig"):
            cell = preview(results)[winner][road]
            assert cell is not None and cell.colour == ask[winner][road]
            assert cell == after.road(road)[-1]
    # a road not started yet has no would-be mark
    assert preview(shoe("B"))["banker"]["cockroach_pig"] is None


def test_counts() -> None:
    counts = compute(shoe("BP*TB+T")).counts
    assert counts == {"rounds": 5, "banker": 2, "player": 1, "tie": 2, "banker_pair": 1, "player_pair": 1}


results_st = st.lists(
    st.builds(Result, st.sampled_from(["banker", "player", "tie"]), st.booleans(), st.booleans()),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(results_st)
def test_properties_on_random_shoes(results: list[Result]) -> None:
    roads = compute(results)
    non_tie = [r for r in results if r.winner != "tie"]
    assert len(roads.bead_plate) == len(results)
    assert len(roads.big_road) == len(non_tie)
    assert sum(c.ties for c in roads.big_road) == (len(results) - len(non_tie) if non_tie else 0)
    for name in ("big_road", "big_eye_boy", "small_road", "cockroach_pig"):
        cells = roads.road(name)
        spots = [(c.row, c.col) for c in cells]
        assert len(set(spots)) == len(spots), name  # never two marks on one cell
        assert all(0 <= c.row < ROWS for c in cells)
    cols, _ = logical_columns(results)
    assert [c.streak for c in roads.big_road] == [i for i, col in enumerate(cols) for _ in col]
    for name, k in (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3)):
        # every big-road entry from the road's start adds exactly one mark
        expected = sum(
            1
            for c, col in enumerate(cols, start=1)
            for r in range(1, len(col) + 1)
            if c > k + 1 or (c == k + 1 and r >= 2)
        )
        assert len(roads.road(name)) == expected, name
