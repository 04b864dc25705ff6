import importlib.util

import pytest

from bayescv.cli import main
from bayescv.losses import read_netcdf


def test_demo_prints_tables_and_writes_outputs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--no-progress", "--random-state", "1"]) == 0
    out = capsys.readouterr().out
    assert "5748 pupils in 79 schools" in out
    assert "CVS (leave one school out)" in out
    assert "CVR (10-fold)" in out
    cvs = read_netcdf(tmp_path / "losses_cvs.nc")
    cvr = read_netcdf(tmp_path / "losses_cvr.nc")
    assert cvs.attrs["scheme"] == "source"
    assert cvr.attrs["scheme"] == "random"
    assert cvs.sizes["obs"] == cvr.sizes["obs"] == 5748
    # the printed CV error is the mean of the stored losses
    assert f"{float(cvs['loss'].mean()):,.1f}" in out
    # the interval section, with the methods defined for unequal block sizes
    assert "95% intervals from closed-form variance estimates" in out
    # squared errors: the default kind is t (K - 1 d.f. for the block-level estimators)
    assert "quantile: t (kind='auto'" in out
    for method in ("theta_B_weighted", "nadeau_bengio", "bayle_within"):
        assert method in out
    # the hierarchical model's three rows, each with its target, and its diagnostics
    assert "95% posterior intervals" in out
    for row, target in [
        ("bayes_expected_cv", "expected_cv"),
        ("bayes_ose", "ose"),
        ("bayes_new_source", "new_source"),
    ]:
        assert any(line.split()[:1] == [row] and target in line for line in out.splitlines())
    auto = "nutpie" if importlib.util.find_spec("nutpie") else "pymc"
    assert f"sampler {auto}: r-hat max" in out
    # the population check of the schools, with its two p-values (docs/bayes.md)
    line = next(x for x in out.splitlines() if x.startswith("population check"))
    assert "spread p = " in line
    assert "skewness p = " in line
    png = (tmp_path / "per_source_losses.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 10_000


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["--version"]])
def test_help_and_version_exit_cleanly(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "bayescv" in capsys.readouterr().out


def test_unknown_command_fails(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fly"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
