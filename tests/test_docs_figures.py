"""Figures the docs quote, held against the output or the benchmark file they come from.

The README's example prints a table of closed-form intervals that tests/test_readme.py did not
compare (it checks the first line against the tables it built): here the whole printed output
is compared with the ```text block under it, as tests/test_docs_examples.py does for the user
guide. Closed-form output: the same digits on every machine.

The other tests read the benchmark results a page cites (benchmarks/results/*.md, written by
the scripts in benchmarks/) and check the numbers quoted from them; each one was misquoted
before (a miss share, a width's sd, a count of cells, a speed-up).
"""

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"


def normalize(text):
    return [line.split() for line in text.strip().splitlines()]


def one_line(path: Path) -> str:
    """The page's text with every run of white space made one space (prose wraps anywhere)."""
    return " ".join(path.read_text(encoding="utf-8").split())


def result_rows(name: str) -> dict[str, dict[str, list[str]]]:
    """{section heading: {row name: cells}} of the tables of a benchmark results file."""
    sections: dict[str, dict[str, list[str]]] = {}
    heading = ""
    for line in (RESULTS / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        elif line.startswith("| ") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            sections.setdefault(heading, {})[cells[0]] = cells[1:]
    return sections


# --- README.md ------------------------------------------------------------------------------


def test_readme_example_prints_what_the_readme_shows(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)\n```", text, flags=re.S)
    (shown,) = re.findall(re.escape(code) + r"\n```\s*prints\s*```text\n(.*?)\n```", text, re.S)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert normalize(out.getvalue()) == normalize(shown)
    # the prose under it rounds the first line: "4,991 against 4,910 score points²"
    cvs_error, cvr_error = map(float, out.getvalue().split()[:2])
    assert f"({round(cvs_error):,} against {round(cvr_error):,} score points²)" in one_line(README)


# --- docs/bayes.md ------------------------------------------------------------------------


def test_bayes_first_version_table_quotes_loss_shapes_binary():
    """The 18.1 %, M = 200 row's score interval missed 1.5 % low, not 2.5 %."""
    cell = result_rows("loss_shapes_binary.md")["18.5% (Bayes error 0.18), M = 200, sources_fixed"]
    coverage, low, high = cell["naive_points_score"][:3]
    quoted = f"| 96.5 ± 1.3 (1.5 / 2.0) | {coverage} ({low} / {high}) |"
    assert quoted == "| 96.5 ± 1.3 (1.5 / 2.0) | 96.0 ± 1.4 (1.5 / 2.5) |"
    assert quoted in (DOCS / "bayes.md").read_text(encoding="utf-8")


def test_bayes_counts_the_jeffreys_cells_above_97_percent():
    """Three of the six Jeffreys cells cover 97.0-97.5 % (the first version had four)."""
    coverages = []
    for name in (
        "loss_shapes_binary_jeffreys_2pct_r400.md",
        "loss_shapes_binary_jeffreys_fixed.md",
    ):
        for rows in result_rows(name).values():
            if "bayes_expected_cv" in rows:
                coverages.append(float(rows["bayes_expected_cv"][0].split()[0]))
    assert len(coverages) == 6
    assert sum(97.0 <= c <= 97.5 for c in coverages) == 3
    text = one_line(DOCS / "bayes.md")
    assert "97.0–97.5 % in three cells where the target was 95 ± 2 %" in text
    assert "97.0–97.5 % in three of the four cells at 35–362 errors" in text


def test_bayes_quotes_the_cv_error_offset_of_the_redrawn_study():
    """At M = 50 the CV error sits +0.07 sd above the truth in the posterior's units."""
    rows = result_rows("loss_shapes_binary_jeffreys_redrawn.md")
    (m50,) = [rows[h] for h in rows if "M = 50," in h]
    assert m50["bayes_ose"][6] == "+0.07"
    assert "the CV error itself sits +0.07 sd above the truth" in one_line(DOCS / "bayes.md")


def test_bayes_quotes_the_median_rerun_of_the_nearly_identical_sources():
    """The M = 10 and 200 rows of the median table are those of their results file."""
    rows = result_rows("loss_shapes_binary_jeffreys_redrawn_m10_m200_median.md")
    text = one_line(DOCS / "bayes.md")
    for m in (10, 200):
        (cell,) = [r["bayes_ose"] for h, r in rows.items() if f"M = {m}," in h]
        coverage, low, high, offset, flagged = cell[0], cell[1], cell[2], cell[5], cell[7]
        quoted = f"| {m} | {coverage} % ({low} / {high})"
        quoted += f", {flagged} flagged" if flagged != "0" else ""
        assert f"{quoted} | {offset} sd |" in text


def test_bayes_quotes_how_much_halving_tau_narrows_ose():
    widths = {}
    for name in (
        "loss_shapes_binary_jeffreys_redrawn.md",
        "loss_shapes_binary_jeffreys_redrawn_tau1.md",
    ):
        widths[name] = [
            float(rows["bayes_ose"][3])
            for rows in result_rows(name).values()
            if "bayes_ose" in rows
        ]
    default, halved = widths.values()
    shrink = [round(100 * (1 - h / d)) for d, h in zip(default, halved, strict=True)]
    assert (min(shrink), max(shrink)) == (5, 13)
    assert "halving τ's scale narrows it by 5–13 %" in one_line(DOCS / "bayes.md")


def test_bayes_bootstrap_rerun_reproduces_only_the_closed_form_and_normal_rows():
    before, after = (
        result_rows("binomial_repeated_cv.md"),
        result_rows("binomial_repeated_cv_bootstrap.md"),
    )
    for heading, rows in before.items():
        for name in ("naive_points", "gaussian_repeated"):
            assert after[heading][name] == rows[name], (heading, name)
    assert any(
        after[h]["binomial_repeated"] != rows["binomial_repeated"] for h, rows in before.items()
    )
    assert "the binomial rows within their Monte Carlo error" in one_line(DOCS / "bayes.md")


def test_bayes_quotes_the_spread_of_the_calibration_widths():
    rows = result_rows("calibrate_bayes.md")[""]
    sd_bayes, sd_bootstrap = rows["bayes_expected_cv"][4], rows["bootstrap"][4]
    assert f"(sd {sd_bayes} against {sd_bootstrap})" in one_line(DOCS / "bayes.md")


# --- docs/compare.md -----------------------------------------------------------------------


def test_compare_quotes_the_batched_speedup_of_nested_cv():
    rows = result_rows("bench_batched.md")[""]
    (nested,) = [cells for name, cells in rows.items() if name.startswith("nested CV, Bates")]
    speedup = nested[-1]
    assert speedup == "12.8x"
    text = one_line(DOCS / "compare.md")
    assert f"({speedup[:-1]}× for nested CV in this setting" in text
    assert "nested CV about 13 times faster" in text
    assert "20 times" not in text


# --- docs/estimators.md and docs/nested.md -------------------------------------------------

HEAVY_TAIL_ROWS = {
    "`naive_points`": "naive_points",
    "`theta_A_weighted`": "theta_A_weighted",
    "`theta_B_weighted`": "theta_B_weighted",
    '`theta_B_weighted`, `kind="log"`': "theta_B_weighted_log",
    "`bootstrap` (B = 50)": "bootstrap",
    "`bayes_expected_cv` (Gaussian model, B = 50)": "bayes_expected_cv",
}
CELL = re.compile(r"^\**([\d.]+ ± [\d.]+)\** \(([\d.]+) / ([\d.]+)\), ([\d.]+)$")


def test_estimators_heavy_tail_table_is_its_results_file():
    """Every cell: coverage ± Monte Carlo error, misses low / high, mean width (2 decimals)."""
    sections = list(result_rows("heavy_tail_intervals.md").values())
    assert len(sections) == 3  # Student-t 3 d.f., 5 d.f., Gaussian: the page's columns
    page = (DOCS / "estimators.md").read_text(encoding="utf-8")
    text = page[page.index("`benchmarks/results/heavy_tail_intervals.md`") :]
    for page_row, file_row in HEAVY_TAIL_ROWS.items():
        (line,) = [line for line in text.splitlines() if line.startswith(f"| {page_row} |")]
        cells = [cell.strip() for cell in line.strip("|").split("|")][1:]
        for cell, rows in zip(cells, sections, strict=True):
            coverage, low, high, width = CELL.match(cell).groups()
            want = rows[file_row]
            assert [coverage, low, high] == want[:3], (page_row, cell)
            assert abs(float(width) - float(want[3])) <= 0.005 + 1e-9, (page_row, cell)
    flagged = [rows["naive_points"][4] for rows in sections]
    assert flagged == ["24.5", "2.5", "0.0"]
    assert "| rows flagged `heavy_tail` | 24.5 % of data sets | 2.5 % | 0.0 % |" in text


def test_nested_quotes_the_batched_timing_of_bates_design():
    rows = result_rows("bench_batched.md")[""]
    (nested,) = [cells for name, cells in rows.items() if name.startswith("nested CV, Bates")]
    per_fit, batched = float(nested[1]), float(nested[2])
    quoted = f"{per_fit:.1f} s per data set one fit at a time, {batched:.1f} s batched"
    assert quoted in one_line(DOCS / "nested.md")


def _lognormal_cells(name: str) -> tuple[list[str], list[str]]:
    """The lognormal population's bayes_ose row and its row of the draws table."""
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in (RESULTS / name).read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and "| lognormal |" in line
    ]
    (ose,) = [r for r in rows if r[2] == "bayes_ose"]
    (draws,) = [r for r in rows if len(r) == 5]
    return ose, draws


def test_bayes_quotes_the_few_schools_and_absolute_error_studies():
    """docs/bayes.md, "A lognormal population of sources": K = 5, absolute errors, τ's scale."""
    text = one_line(DOCS / "bayes.md")
    ose, draws = _lognormal_cells("ose_population_star_absolute.md")
    assert draws[3] == "11: 1.22, sd 0.28"
    assert draws[2] == "7: 0.85, sd 0.17"
    assert draws[4].endswith("sd 0.23")
    assert "1.22 times the truth (median over those 11 data sets)" in text
    assert "log means 0.17, against 0.23 where it covers" in text
    ose, draws = _lognormal_cells("ose_population_star_k5.md")
    assert ose[3:6] == ["91.0 ± 2.0", "3.0 / 6.0", "-0.24 ± 0.06"]
    assert "the lognormal one 91.0 ± 2.0 % (3.0 / 6.0, centre −0.24 ± 0.06 sd)" in text
    assert draws[3].startswith("12: 1.68,")
    assert "1.68 times the truth (median over those 12 data sets" in text
    assert float(ose[6]) == 27010.0
    ose, draws = _lognormal_cells("ose_population_star_absolute_k5.md")
    assert ose[3:5] == ["88.5 ± 2.3", "5.0 / 6.5"]
    assert draws[3].startswith("13: 1.32,")
    assert "88.5 ± 2.3 % (5.0 / 6.5)" in text
    ose, _ = _lognormal_cells("ose_population_star_k5_tau4.md")
    assert ose[3:5] == ["90.5 ± 2.1", "2.5 / 7.0"]
    assert float(ose[6]) == 1.37e05
    assert "90.5 ± 2.1 % (2.5 / 7.0), with intervals five times as wide" in text
    assert "(mean width 137,000 against 27,010)" in text


def test_bayes_quotes_the_shape_of_the_star_school_means():
    """Skewness and excess kurtosis of the log school means (79 STAR schools, ridge, LOSO)."""
    import numpy as np
    from scipy import stats
    from sklearn.linear_model import Ridge

    import bayescv

    star = bayescv.load_star()
    shape = {}
    for loss in ("squared", "absolute"):
        cvs = bayescv.cross_val_losses(
            Ridge(), star.data, star.target, groups=star.groups, loss=loss, random_state=0
        )
        logs = np.log(cvs["loss"].groupby("block").mean().values)
        shape[loss] = (round(stats.skew(logs), 2), round(stats.kurtosis(logs), 2))
    assert shape == {"squared": (0.70, 1.08), "absolute": (0.96, 1.82)}
    assert (
        "skewness 0.96 and excess kurtosis 1.82 of the log school means of absolute errors, "
        "0.70 and 1.08 for squared errors" in one_line(DOCS / "bayes.md")
    )


def test_bayes_quotes_the_log_loss_study():
    """docs/bayes.md, "A lognormal population of sources": log loss on logistic sources."""
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in (RESULTS / "ose_population_logistic_log_loss.md").read_text().splitlines()
        if line.startswith("| 10 |")
    ]
    ose = {r[1]: r[3:6] for r in rows if len(r) > 5 and r[2] == "bayes_ose"}
    assert ose["normal"] == ["97.0 ± 1.2", "3.0 / 0.0", "-0.60 ± 0.06"]
    assert ose["lognormal"] == ["98.5 ± 0.9", "0.5 / 1.0", "+0.09 ± 0.05"]
    (covered,) = [r[4] for r in rows if len(r) == 5 and r[1] == "lognormal"]
    assert covered.endswith("sd 0.19")
    text = one_line(DOCS / "bayes.md")
    assert "covered 97.0 ± 1.2 % with every miss low and its centre 0.60 ± 0.06 sd below" in text
    assert (
        "the lognormal one 98.5 ± 0.9 % (misses 0.5 low / 1.0 high), centred (+0.09 ± 0.05" in text
    )
    assert "(standard deviation of the log source means 0.19, the median over the covered" in text
    # "the standard error of one source's log mean ... is about 0.18": sqrt(W/(n−1)/n)/ē
    # from the study's per-block statistics, kept in its JSON as the draws table is not
    import json

    result = json.loads((RESULTS / "ose_population_logistic_log_loss.json").read_text())
    (cell,) = [c for c in result["cells"] if c["population"] == "lognormal"]
    assert round(cell["log_mean_se"], 2) == 0.18
    assert "is about 0.18 by the delta method" in text


def test_shift_quotes_the_tail_flag_measurement():
    """docs/shift.md says why its intervals carry no heavy-tail flag, with figures from it."""
    rows = {}
    for line in (RESULTS / "shift_tail_flag.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| exact") or line.startswith("| estimated"):
            rows[tuple(cells[:3])] = cells[3:]
    text = one_line(DOCS / "shift.md")
    # k̂(ℓ·w) > 0.5 at a shift of 1, n = 1000: rate (coverage of the flagged / of the others)
    assert rows["exact", "1000", "1.00"][3] == "68.5 (98.5 / 81.0)"
    assert "flags 68.5 % of the data sets, whose intervals cover 98.5 %, against 81.0 %" in text
    # k̂(w) > 0.7 at a shift of 1.5, n = 200, exact weights
    assert rows["exact", "200", "1.50"][5] == "19.5 (87.2 / 69.6)"
    assert "it flags 19.5 % of the data sets at a shift of 1.5" in text
    assert "which cover 87.2 %, against 69.6 %" in text
    coverages = [float(cells[0]) for key, cells in rows.items() if key[2] == "1.50"]
    assert (min(coverages), max(coverages)) == (73.0, 85.0)
    assert "coverage was 73.0–85.0 % at a shift of 1.5" in text


def test_estimators_few_blocks_table_is_its_results_file():
    """Each row of "Few blocks: why t": both quantiles' coverage (misses) as the file has them."""
    file_rows = {}
    for line in (RESULTS / "small_k_quantile.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] in ("random", "source"):
            file_rows[cells[0], cells[1], cells[2]] = cells[4:6]
    page = (DOCS / "estimators.md").read_text(encoding="utf-8")
    table = page[page.index("**Few blocks: why t.**") : page.index("That trade is why")]
    rows = [line for line in table.splitlines() if line.startswith(("| random", "| sources"))]
    assert len(rows) == 9
    for line in rows:
        where, method, normal, t = (cell.strip() for cell in line.strip("|").split("|"))
        scheme, k = where.split(", ")
        name = method.split(" ")[0]
        key = ("source" if scheme == "sources" else "random", k, name)
        assert file_rows[key] == [normal, t], line


def test_estimators_heavy_tail_t_rows_are_the_rerun_of_the_same_data_sets():
    """The t rows come from small_k_quantile.md, whose normal column reproduces the study's."""
    study = list(result_rows("heavy_tail_intervals.md").values())
    rerun = {}
    for line in (RESULTS / "small_k_quantile.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0].startswith(("Student-t", "Gaussian")):
            rerun[cells[0], cells[1].strip("`")] = cells[2:4]
    noises = ("Student-t, 3 d.f.", "Student-t, 5 d.f.", "Gaussian")
    for noise, rows in zip(noises, study, strict=True):
        for name in ("naive_points", "theta_A_weighted", "theta_B_weighted"):
            coverage, low, high, width = CELL.match(rerun[noise, name][0]).groups()
            assert [coverage, low, high] == rows[name][:3], (noise, name)
            assert abs(float(width) - float(rows[name][3])) <= 0.005 + 1e-9, (noise, name)
    page = (DOCS / "estimators.md").read_text(encoding="utf-8")
    for name in ("theta_A_weighted", "theta_B_weighted"):
        (line,) = [
            line for line in page.splitlines() if line.startswith(f"| `{name}`, t (9 d.f.) |")
        ]
        cells = [cell.strip() for cell in line.strip("|").split("|")][1:]
        assert cells == [rerun[noise, name][1] for noise in noises], name


def test_estimators_quotes_the_score_interval_at_small_k():
    """The 0-1 section of small_k_quantile.md: score intervals keep the normal quantile."""
    text = (RESULTS / "small_k_quantile.md").read_text(encoding="utf-8")
    section = text[text.index("## 0-1 losses") :]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0].isdigit():
            rows[cells[0], cells[1].strip("`")] = cells[3].split(" ")[0]
    page = one_line(DOCS / "estimators.md")
    assert (rows["3", "naive_folds"], rows["5", "naive_folds"]) == ("71.0", "80.8")
    assert "`naive_folds` covered `err` in 71.0 % of the data sets at K = 3 and 80.8 %" in page
    assert (rows["3", "nadeau_bengio"], rows["5", "nadeau_bengio"]) == ("95.8", "97.0")
    assert "`nadeau_bengio` (95.8 % and 97.0 % there)" in page
    # the post-hoc t column: small K, and the K = 10 sources cell
    post_hoc = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and cells[0] != "K":
            post_hoc[cells[0], cells[1].strip("`")] = (cells[3].split(" ")[0], cells[4])
    assert post_hoc["3", "naive_folds"][1] == "90.0"
    assert post_hoc["5", "naive_folds"][1] == "91.6"
    assert post_hoc["10 sources", "theta_A"] == ("96.4", "98.4")
    assert "would lift `naive_folds` to 90.0 and 91.6 % there" in page
    assert "(`theta_A` from 96.4 to 98.4 %, in the 18.5 % cell" in page


def test_bayes_quotes_the_first_run_on_a_fresh_machine():
    """The fresh-machine paragraph of docs/bayes.md against its run's JSON (and the per-step
    cost it compares with, from bench_bayes.json)."""
    import json

    fresh = json.loads((RESULTS / "bench_bayes_fresh_machine_2026-11-29.json").read_text())
    main = json.loads((RESULTS / "bench_bayes.json").read_text())
    assert fresh["caches_at_start"]["pytensor_files"] == 0
    assert fresh["caches_at_start"]["bayescv_files"] == 0
    cli = fresh["time_to_answer"]["cli"]
    step = fresh["flat_in_n"]["median_sampling_s_per_post_tuning_step"]["1000"]
    main_step = main["flat_in_n"]["median_sampling_s_per_post_tuning_step"]["1000"]
    first = fresh["first_vs_later"]
    quoted = (
        f"PyMC's NUTS took {step * 1e6:.0f} µs per leapfrog step against "
        f"{main_step * 1e6:.0f} µs in `bench_bayes.md`",
        f"`bayescv bayes` took {cli['cold_s']:.1f} s with its cache empty and "
        f"{cli['warm_median_s']:.1f} s with it warm",
        f"`bayescv variance` took {cli['variance_median_s']:.1f} s on the same file there), "
        f"a later fit in one process {fresh['time_to_answer']['later']['median_s']:.2f} s",
        f'The first fit with `sampler="pymc"` took {first["first"]["fit_s"]:.1f} s',
        f"(later fits {first['later_median_s']:.1f} s), and the first compile of nutpie's "
        f"density {fresh['samplers']['nutpie']['compile_s']:.1f} s.",
    )
    text = one_line(DOCS / "bayes.md")
    for phrase in quoted:
        assert phrase in text, phrase
