import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescv.classical import variance_estimates
from bayescv.cli import main
from bayescv.losses import from_arrays, to_csv

JSON_KEYS = {
    "N", "K", "mu_hat", "s1", "s2", "s3", "theta_1", "theta_2", "theta_3", "theta_4",
    "theta_5", "theta_A", "theta_B", "theta_A_weighted", "theta_B_weighted", "theta_omega",
    "theta_gamma", "se_points", "se_folds", "sigma2_within", "sigma2_all_pairs", "intervals",
    "warnings",
}  # fmt: skip
EQUAL_ONLY = {
    "theta_1", "theta_2", "theta_3", "theta_4", "theta_5",
    "theta_A", "theta_B", "theta_omega", "theta_gamma",
}  # fmt: skip


def write(tmp_path, name, sizes, seed=0, **extra):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    frame = pd.DataFrame(
        {"fold": np.repeat(np.arange(len(sizes)), sizes), "err": rng.gamma(2.0, 1.0, n), **extra}
    )
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path, frame


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_the_documented_keys_and_values(tmp_path, capsys):
    path, frame = write(tmp_path, "eq.csv", [8] * 5)
    out = run_json(
        capsys,
        ["variance", str(path), "--block-col", "fold", "--loss-col", "err", "--format", "json"],
    )
    assert set(out) >= JSON_KEYS
    assert out["N"] == 40
    assert out["K"] == 5
    assert out["warnings"] == []
    # the CLI reports the library's numbers: same table, same estimators
    table = from_arrays(frame["err"].to_numpy(), frame["fold"].to_numpy())
    theta = variance_estimates(table)["theta"]
    for key in EQUAL_ONLY:
        assert out[key] == pytest.approx(float(theta.sel(estimator=key)), rel=1e-12)
    assert out["mu_hat"] == pytest.approx(frame["err"].mean(), rel=1e-12)
    # For equal block sizes the weighted θ_A, θ_B are θ_A, θ_B (docs/estimators.md).
    assert out["theta_A_weighted"] == pytest.approx(out["theta_A"], rel=1e-12)
    assert out["theta_B_weighted"] == pytest.approx(out["theta_B"], rel=1e-12)
    # Bates eq. 5: se of the mean of all points; eq. 9: se of the fold means
    assert out["se_points"] == pytest.approx(frame["err"].std() / np.sqrt(40), rel=1e-12)
    fold_means = frame.groupby("fold")["err"].mean()
    assert out["se_folds"] == pytest.approx(fold_means.std() / np.sqrt(5), rel=1e-12)
    # Bayle: sigma2_all_pairs = (1/N) sum (e - mean)^2
    assert out["sigma2_all_pairs"] == pytest.approx(frame["err"].var(ddof=0), rel=1e-12)
    lower, upper = out["intervals"]["naive_points"]
    z = stats.t.ppf(0.975, 39)  # the default kind, t, on N − 1 d.f. for naive_points
    assert lower == pytest.approx(out["mu_hat"] - z * out["se_points"], rel=1e-12)
    assert upper == pytest.approx(out["mu_hat"] + z * out["se_points"], rel=1e-12)


def test_unequal_sizes_give_null_and_warnings(tmp_path, capsys):
    path, _ = write(tmp_path, "uneq.csv", [8, 7, 9, 8])
    out = run_json(
        capsys,
        ["variance", str(path), "--block-col", "fold", "--loss-col", "err", "--format", "json"],
    )
    for key in EQUAL_ONLY:
        assert out[key] is None
        assert any(w.startswith(f"{key} needs equal block sizes") for w in out["warnings"])
    assert out["theta_3"] is None
    assert out["intervals"]["theta_3"] == [None, None]
    assert out["se_points"] is not None
    assert out["sigma2_within"] is not None


def weighted_theta_a(frame):
    """θ_A for unequal blocks, Σ_k n_k s_k² / N² (docs/estimators.md, "The estimators")."""
    blocks = frame.groupby("fold")["err"]
    return float((blocks.count() * blocks.var(ddof=1)).sum() / len(frame) ** 2)


def test_unequal_sizes_report_the_weighted_thetas(tmp_path, capsys):
    path, frame = write(tmp_path, "uneq.csv", [8, 7, 9, 8])
    argv = ["variance", str(path), "--block-col", "fold", "--loss-col", "err"]
    out = run_json(capsys, [*argv, "--format", "json"])
    theta_a = weighted_theta_a(frame)
    assert out["theta_A_weighted"] == pytest.approx(theta_a, rel=1e-12)
    assert out["theta_B_weighted"] == pytest.approx(2 * theta_a, rel=1e-12)
    # The table shows the θ's that apply: the weighted ones, not nine rows of null, and
    # names the others in one warning.
    assert main(argv) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip()}
    assert float(rows["theta_A_weighted"][0]) == pytest.approx(theta_a, rel=1e-5)
    assert float(rows["theta_B_weighted"][0]) == pytest.approx(2 * theta_a, rel=1e-5)
    assert "null" not in text
    for key in EQUAL_ONLY - {"theta_1", "theta_2", "theta_3", "theta_4", "theta_5"}:
        assert key not in rows  # θ_1…θ_5 still have (NaN) interval rows below
    needs = [line for line in text.splitlines() if "need equal block sizes" in line]
    assert len(needs) == 1
    assert all(key in needs[0] for key in EQUAL_ONLY)
    assert "needs equal block sizes" not in text


def test_equal_sizes_table_has_no_duplicate_weighted_rows(tmp_path, capsys):
    path, _ = write(tmp_path, "eq.csv", [6] * 4)
    assert main(["variance", str(path), "--block-col", "fold", "--loss-col", "err"]) == 0
    text = capsys.readouterr().out
    # For equal sizes the weighted θ's equal θ_A and θ_B, which the table shows already.
    assert "theta_B_weighted" not in text
    assert sum(line.startswith(("theta_A ", "theta_B ")) for line in text.splitlines()) == 2


def test_table_format_and_scheme(tmp_path, capsys):
    path, _ = write(tmp_path, "eq.csv", [6] * 4)
    argv = [
        "variance",
        str(path),
        "--block-col",
        "fold",
        "--loss-col",
        "err",
        "--scheme",
        "source",
    ]
    assert main([*argv, "--level", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "K = 4 blocks of M = 6 (scheme: source)" in out
    assert "90% intervals" in out
    assert "theta_B" in out
    assert "expected_cv" in out


def test_reads_a_bayescv_loss_table_csv(tmp_path, capsys):
    rng = np.random.default_rng(3)
    table = from_arrays(rng.random(12), np.repeat([0, 1, 2], 4))
    to_csv(table, tmp_path / "t.csv")
    out = run_json(capsys, ["variance", str(tmp_path / "t.csv"), "--format", "json"])
    assert out["mu_hat"] == pytest.approx(float(table["loss"].mean()), rel=1e-12)


def test_paired_comparison(tmp_path, capsys):
    path_a, a = write(tmp_path, "a.csv", [10] * 5, seed=1)
    path_b, b = write(tmp_path, "b.csv", [10] * 5, seed=2)
    common = ["--block-col", "fold", "--loss-col", "err"]
    out = run_json(
        capsys,
        ["variance", "--paired", str(path_a), str(path_b), *common, "--format", "json",
         "--alternative", "less", "--methods", "naive_points,bayle_within"],
    )  # fmt: skip
    assert out["difference"] == "A - B"
    assert out["alternative"] == "less"
    naive = out["methods"]["naive_points"]
    h = a["err"] - b["err"]
    assert naive["estimate"] == pytest.approx(h.mean(), rel=1e-12)
    # the one-sided p-value is the t cdf (the default kind, N − 1 d.f.) of mean(h)/se(h)
    statistic = h.mean() / (h.std() / np.sqrt(len(h)))
    assert naive["statistic"] == pytest.approx(statistic, rel=1e-12)
    assert naive["p_value"] == pytest.approx(stats.t.cdf(statistic, len(h) - 1), rel=1e-10)
    assert main(["variance", "--paired", str(path_a), str(path_b), *common]) == 0
    assert "paired comparison" in capsys.readouterr().out


def bad_inputs(tmp_path):
    good = pd.DataFrame({"block": [0, 0, 1, 1], "loss": [0.1, 0.2, 0.3, 0.4]})
    cases = {
        "missing column": good.rename(columns={"loss": "error"}),
        "non-numeric loss": good.assign(loss=["0.1", "oops", "0.3", "0.4"]),
        "NaN loss": good.assign(loss=[0.1, np.nan, 0.3, 0.4]),
        "inf loss": good.assign(loss=[0.1, np.inf, 0.3, 0.4]),
        "one block": good.assign(block=[0, 0, 0, 0]),
        "block of one point": good.assign(block=[0, 0, 0, 1]),
    }
    paths = {}
    for name, frame in cases.items():
        paths[name] = tmp_path / f"{name.replace(' ', '_')}.csv"
        frame.to_csv(paths[name], index=False)
    (tmp_path / "empty.csv").write_text("")
    paths["empty file"] = tmp_path / "empty.csv"
    paths["no such file"] = tmp_path / "absent.csv"
    return paths


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("missing column", "no loss column 'loss'"),
        ("non-numeric loss", "non-numeric loss 'oops' in column 'loss', data row 2"),
        ("NaN loss", "missing loss (empty field) in column 'loss', data row 2"),
        ("inf loss", "inf"),
        ("one block", "fewer than two blocks"),
        ("block of one point", "fewer than two points"),
        ("empty file", "the file is empty"),
        ("no such file", "no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case, needle):
    path = bad_inputs(tmp_path)[case]
    assert main(["variance", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("bayescv variance: error:")
    assert needle in lines[0]


def test_wrong_number_of_files(tmp_path, capsys):
    path, _ = write(tmp_path, "eq.csv", [4] * 3)
    assert main(["variance", str(path), str(path)]) == 2
    assert "expected 1 CSV file(s)" in capsys.readouterr().err
    assert main(["variance", "--paired", str(path)]) == 2
    assert "expected 2 CSV file(s) with --paired" in capsys.readouterr().err


def test_paired_files_on_different_splits_fail(tmp_path, capsys):
    path_a, _ = write(tmp_path, "a.csv", [5] * 4)
    path_b, _ = write(tmp_path, "b.csv", [4] * 5)
    argv = ["variance", "--paired", str(path_a), str(path_b), "--block-col", "fold"]
    assert main([*argv, "--loss-col", "err"]) == 2
    assert "compare learners on the same splits" in capsys.readouterr().err
