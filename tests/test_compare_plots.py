import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bayescv.compare import (
    MultiSourceLinear,
    decompose,
    demo_study,
    run_study,
    summarize,
)
from bayescv.compare.plots import (
    plot_coverage,
    plot_decomposition,
    plot_intervals,
    plot_summary,
    plot_theta,
)


@pytest.fixture(scope="module")
def study(small_bates_study):
    return small_bates_study


def test_plot_coverage_points_are_the_summary(study):
    s = summarize(study)
    ax = plot_coverage({10: s, 20: s}, target="err_xy", methods=["theta_B"])
    line = ax.lines[0]
    expected = s["coverage"].sel(method_name="theta_B", target="err_xy").item()
    np.testing.assert_allclose(np.asarray(line.get_ydata(), float), [expected, expected])
    assert ax.lines[-1].get_ydata()[0] == pytest.approx(0.95)  # nominal line (the default level)
    with pytest.raises(ValueError, match="no target"):
        plot_coverage({10: s}, target="ose")
    plt.close("all")


def test_plot_theta_marks_the_true_theta(study):
    ax = plot_theta(study)
    truth = study["mu_hat"].var(ddof=1).item()
    assert any(np.allclose(line.get_ydata(), truth) for line in ax.lines)
    with pytest.raises(ValueError, match="not in the result"):
        plot_theta(study, methods=["nope"])
    plt.close("all")


def test_plot_intervals_and_summary(study):
    ax = plot_intervals(study, method="naive_points", target="err_xy")
    covered = summarize(study)["coverage"].sel(method_name="naive_points", target="err_xy")
    assert f"{100 * covered.item():.0f}% of 6 cover err_xy" in ax.get_title()
    ax = plot_summary(summarize(study), targets=["err_xy"])
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, summarize(study)["coverage"].sel(target="err_xy").values)
    plt.close("all")


def test_plot_decomposition_draws_the_terms():
    st = run_study(MultiSourceLinear(3, 5), methods=["theta_A"], n_replicates=5, truths=[],
                   random_state=0)  # fmt: skip
    dec = decompose(st)
    ax = plot_decomposition({5: dec, 10: dec})
    assert [line.get_label() for line in ax.lines] == ["σ² term", "ω term", "γ term", "θ"]
    np.testing.assert_allclose(ax.lines[3].get_ydata(), [dec["theta"].item()] * 2)
    plt.close("all")


def test_demo_study_writes_table_and_figure(tmp_path):
    text = demo_study(random_state=0, n_jobs=1, progress=False, n_replicates=4, out=tmp_path)
    assert "bates-logistic: design iid" in text
    assert "naive_points" in text
    assert (tmp_path / "study.nc").exists()
    assert (tmp_path / "study.png").stat().st_size > 10_000
