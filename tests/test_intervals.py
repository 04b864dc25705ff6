import numpy as np
import pytest
from scipy import stats

from bayescv.intervals import check_level, combine_intervals, interval_dataset, normal_bounds


def one(method, target="err", level=0.9, **extra):
    ds = interval_dataset(
        [method], estimate=[1.0], lower=[0.5], upper=[1.5], se=[0.3], level=level, target=target
    )
    return ds.assign(**extra)


def test_normal_bounds_match_scipy_quantiles():
    se, lower, upper, flag = normal_bounds([2.0, 2.0], [0.25, 0.25], level=0.9)
    z = stats.norm.ppf(0.95)  # two-sided 90%: the 0.95 quantile
    np.testing.assert_allclose(se, 0.5)
    np.testing.assert_allclose(lower, 2.0 - z * 0.5)
    np.testing.assert_allclose(upper, 2.0 + z * 0.5)
    assert flag.tolist() == ["", ""]
    _, lower_t, _, _ = normal_bounds(2.0, 0.25, level=0.9, kind="t", df=4)
    assert lower_t == pytest.approx(2.0 - stats.t.ppf(0.95, 4) * 0.5)


def test_negative_and_nan_variances_are_flagged_not_clipped():
    se, lower, upper, flag = normal_bounds([1.0, 1.0, 1.0], [-0.1, np.nan, 0.0])
    assert np.isnan(se[:2]).all()
    assert np.isnan(lower[:2]).all()
    assert np.isnan(upper[:2]).all()
    assert flag.tolist() == ["negative_variance", "undefined_variance", "zero_variance"]
    assert lower[2] == upper[2] == 1.0  # zero variance: a point interval, legitimately


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"level": 1.0}, "level must be a number in"),
        ({"target": "nonsense"}, "unknown target"),
        ({"method_name": ["a", "a"]}, "unique"),
        ({"estimate": [[1.0]]}, "expected 1 dims"),
    ],
)
def test_interval_dataset_rejects_bad_input(kwargs, match):
    args = {
        "method_name": kwargs.get("method_name", ["a"]),
        "estimate": [1.0],
        "lower": [0.0],
        "upper": [2.0],
        "se": [0.5],
        "level": 0.9,
        "target": "err",
    }
    if "method_name" in kwargs:
        args.update({k: [1.0, 1.0] for k in ("estimate", "lower", "upper", "se")})
    args.update({k: v for k, v in kwargs.items() if k != "method_name"})
    method = args.pop("method_name")
    with pytest.raises(ValueError, match=match):
        interval_dataset(method, **args)


def test_normal_bounds_rejects_bad_dist():
    with pytest.raises(ValueError, match="kind must be one of"):
        normal_bounds(1.0, 1.0, kind="cauchy")
    with pytest.raises(ValueError, match="needs the degrees of freedom"):
        normal_bounds(1.0, 1.0, kind="t")


def test_combine_keeps_rows_targets_and_variables_without_method_dim():
    combined = combine_intervals(one("a", extra=3.0), one("b", target="ose", extra=4.0))
    assert combined["method_name"].values.tolist() == ["a", "b"]
    assert combined["target"].values.tolist() == ["err", "ose"]
    assert combined.attrs["target"] == "err, ose"
    assert combined["extra"].values.tolist() == [3.0, 4.0]
    assert combined.attrs["level"] == 0.9


def test_combine_refuses_mixed_levels_and_duplicates():
    with pytest.raises(ValueError, match="different levels"):
        combine_intervals(one("a"), one("b", level=0.95))
    # the message names the repeated methods, not every method's numpy repr
    with pytest.raises(ValueError, match=r"method names repeat across results: a$"):
        combine_intervals(one("a"), one("a"), one("b"))
    with pytest.raises(ValueError, match="at least one"):
        combine_intervals()


def test_a_method_is_selected_by_keyword():
    ds = combine_intervals(one("a"), one("b"))
    # The dim is not named `method`, a keyword of Dataset.sel that would swallow the label
    # (ds.sel(method="b") returns every row): the keyword form selects one row.
    assert "method" not in ds.dims
    row = ds.sel(method_name="b")
    assert row["estimate"].ndim == 0
    assert row["method_name"].item() == "b"
    assert row["estimate"].item() == ds["estimate"].values[1]


# ---------------------------------------------------------------- levels and flags


@pytest.mark.parametrize(
    "level", [0.9, np.float32(0.9), np.float64(0.9), np.array(0.9), np.float16(0.5), 0.5]
)
def test_check_level_accepts_real_scalars(level):
    check_level(level)
    upper = normal_bounds(1.0, 0.04, level=level)[2]
    z = stats.norm.ppf(0.5 + float(level) / 2)
    np.testing.assert_allclose(upper, 1.0 + 0.2 * z, rtol=1e-12)


@pytest.mark.parametrize(
    "level", [0, 1, 1.5, -0.1, np.nan, True, np.bool_(True), "0.9", 0.9 + 0j, None, [0.9]]
)
def test_check_level_refuses(level):
    with pytest.raises(ValueError, match=r"level must be a number in \(0, 1\)"):
        check_level(level)


def test_normal_bounds_flags_every_non_finite_case():
    big = np.finfo(np.float64).max
    estimate = [0.0, 0.0, 0.0, np.nan, np.inf, -big, 1.0]
    variance = [-1.0, np.nan, np.inf, 1.0, 1.0, big, 1.0]
    _, lower, upper, flag = normal_bounds(estimate, variance, level=0.999999)
    assert flag.tolist()[:-2] == [
        "negative_variance",
        "undefined_variance",
        "infinite_variance",
        "undefined_estimate",
        "undefined_estimate",
    ]
    # the largest finite inputs still give finite bounds: q sqrt(max) is about 1e155
    assert flag.tolist()[-2:] == ["", ""]
    assert np.isfinite([lower[-2], upper[-2]]).all()
    # a flagged row has NaN bounds, never ±inf
    assert np.isnan(lower[:-2]).all()
    assert np.isnan(upper[:-2]).all()
