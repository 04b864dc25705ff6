"""The O(N) shortcuts of the table checks give the answers of the whole-array expressions.

``validate`` counts the points of each block from the runs of equal labels (the tables of
:mod:`bayescv.losses` store a block as one run) instead of sorting every label, and
``is_binary`` looks at the first values before reading the rest. Both must agree with the
plain computations they replace, ``np.unique(row, return_counts=True)`` and
``np.isin(loss, (0, 1)).all()``, on every layout.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayescv.losses import from_arrays, is_binary, validate
from bayescv.losses._range import _HEAD
from bayescv.losses._runs import _label_counts


def _rows(rng: np.random.Generator):
    for n in (1, 2, 7, 50):
        yield rng.integers(0, 5, n)  # interleaved blocks
        yield np.sort(rng.integers(0, 5, n))  # one run per block, as tables store them
        yield rng.integers(0, 4, n).astype(str)
        yield np.array([f"s{v}" for v in rng.integers(0, 4, n)], dtype=object)
        yield rng.integers(0, 3, n).astype(float)


def test_label_counts_equal_numpy_unique_on_every_layout():
    rng = np.random.default_rng(3)
    for row in _rows(rng):
        labels, counts = _label_counts(row)
        expected_labels, expected_counts = np.unique(row, return_counts=True)
        assert labels.tolist() == expected_labels.tolist()
        assert counts.tolist() == expected_counts.tolist()
        assert counts.dtype == np.int64


def test_validate_still_names_a_one_point_block_of_an_interleaved_table():
    # Block 2 has one point, between points of block 0: two runs of block 0, one of block 2.
    table = from_arrays([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 0, 1, 1, 2, 2])
    table = table.assign_coords(block=("obs", [0, 2, 0, 1, 1, 1]))
    with pytest.raises(ValueError, match=r"block\(s\) \[2\] have fewer than two points"):
        validate(table)


def test_is_binary_reads_past_its_first_values():
    # 0s and 1s in the first _HEAD values, a 0.5 after them: not a 0-1 table.
    n = 3 * _HEAD
    loss = (np.arange(n) % 2).astype(float)
    blocks = np.repeat([0, 1, 2], _HEAD)
    assert is_binary(from_arrays(loss, blocks))
    loss[-1] = 0.5
    assert not is_binary(from_arrays(loss, blocks))
    assert is_binary(from_arrays(loss, blocks)) == bool(np.isin(loss, (0.0, 1.0)).all())
