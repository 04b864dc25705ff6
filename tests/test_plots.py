import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bayescv.losses import from_arrays
from bayescv.plots import plot_block_losses


def test_plot_block_losses_draws_sorted_means_with_labels():
    table = from_arrays(
        [3.0, 5.0, 0.0, 2.0, 1.0, 1.0],
        ["a", "a", "b", "b", "c", "c"],
        scheme="source",
        loss_name="squared",
    )
    ax = plot_block_losses(table, by="source")
    line = ax.lines[0]
    # means per source (4, 1, 1) sorted ascending: b and c (1.0) before a (4.0)
    np.testing.assert_allclose(sorted(line.get_ydata()), [1.0, 1.0, 4.0])
    assert line.get_ydata()[-1] == 4.0
    assert ax.get_ylabel() == "mean squared error ± 1 SE"
    assert "source" in ax.get_xlabel()
    plt.close(ax.figure)


def test_plot_block_losses_errors():
    table = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="no 'source' coordinate"):
        plot_block_losses(table, by="source")
    with pytest.raises(ValueError, match="no tables"):
        plot_block_losses({})
