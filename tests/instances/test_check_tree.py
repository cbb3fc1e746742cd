"""instances.errors.check_tree's fast path (issue 29 item 3) rejects what the exact walk
does, naming the same first offender."""
from __future__ import annotations

import pytest

from instances.errors import MAX_DEPTH, InstanceError, check_tree

OK = [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize("data, where, what", [
    ({"C": [[1, 2], [3, float("nan")]]}, "C[1][1]", "non-finite"),
    ({"C": [[1, 2], [3, 2**64]]}, "C[1][1]", "64 bits"),
    ({"C": [0.5, float("inf"), 1.0]}, "C[1]", "non-finite"),
    ({"C": [[1.5, 2e19]]}, "C[0][1]", "magnitude"),
    ({"C": [[1, 2], [3, {"x": float("nan")}]]}, "C[1][1].x", "non-finite"),
])
def test_the_first_offender_is_named(data, where, what):
    with pytest.raises(InstanceError) as exc:
        check_tree(data)
    assert exc.value.field == where and what in str(exc.value)


def test_plain_numbers_and_what_the_walk_allows_pass():
    check_tree({"C": OK, "f": [[0.5, 1e18], [-1e18, 3]], "b": [[True, None, "x"]], "e": [[]]})


def test_depth_is_still_counted_inside_plain_lists():
    deep: list = [1]
    for _ in range(MAX_DEPTH):
        deep = [deep]
    with pytest.raises(InstanceError, match="nested deeper"):
        check_tree({"C": deep})
