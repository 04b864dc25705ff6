"""The two-Gaussian oracle of bayescv.shift, checked against numerical integration.

Every closed form of GaussianShift (its module docstring derives them) is recomputed here by
quadrature of the defining integral over the source density, so the Monte Carlo tests of the
estimators rest on references that are themselves verified.
"""

import numpy as np
import pytest
from scipy import integrate, stats

from bayescv.shift import GaussianShift

SCENARIOS = [
    GaussianShift(),
    GaussianShift(shift=0.5),
    GaussianShift(shift=1.3, scale=0.7, misfit=1.0, noise=0.3),
    GaussianShift(shift=-0.8, scale=1.5, misfit=0.2, noise=2.0),
]


def bounds(sc):
    """Integration range: the integrands are Gaussians around k·δ (k ≤ 3) times polynomials;
    beyond 3|δ| + 15 s their mass is below 1e-40."""
    half = 3 * abs(sc.shift) + 15 * sc.scale
    return -half, half


def source_expectation(sc, f):
    """E_S[f(x)] for x ~ N(0, s²), by adaptive quadrature."""
    value, _ = integrate.quad(
        lambda x: f(x) * stats.norm.pdf(x, 0.0, sc.scale), *bounds(sc), epsabs=1e-11, limit=200
    )
    return value


def cond_loss(sc, x):
    """E[l | x] = c² x² + σ² for l = (c x + σ ε)²."""
    return sc.misfit**2 * x**2 + sc.noise**2


def cond_loss_sq(sc, x):
    """E[l² | x] = E[(c x + σ ε)⁴] = c⁴ x⁴ + 6 c² σ² x² + 3 σ⁴ (Gaussian fourth moment)."""
    c, s = sc.misfit, sc.noise
    return c**4 * x**4 + 6 * c**2 * s**2 * x**2 + 3 * s**4


@pytest.mark.parametrize("sc", SCENARIOS)
def test_density_ratio_is_the_ratio_of_the_two_normal_densities(sc):
    x = np.linspace(-3, 3, 13)
    expected = stats.norm.pdf(x, sc.shift, sc.scale) / stats.norm.pdf(x, 0.0, sc.scale)
    np.testing.assert_allclose(sc.density_ratio(x), expected, rtol=1e-12)


@pytest.mark.parametrize("sc", SCENARIOS)
def test_closed_forms_match_quadrature(sc):
    w = sc.density_ratio
    risk_target, _ = integrate.quad(
        lambda x: cond_loss(sc, x) * stats.norm.pdf(x, sc.shift, sc.scale), *bounds(sc)
    )
    # Importance-weighting identity of Kouw & Loog: E_T[l] = E_S[l w].
    risk_weighted = source_expectation(sc, lambda x: cond_loss(sc, x) * w(x))
    assert sc.target_risk == pytest.approx(risk_target, rel=1e-9)
    assert sc.target_risk == pytest.approx(risk_weighted, rel=1e-9)
    assert source_expectation(sc, w) == pytest.approx(1.0, rel=1e-9)  # E_S[w] = 1
    assert sc.var_weights == pytest.approx(source_expectation(sc, lambda x: (w(x) - 1) ** 2))
    var_lw = source_expectation(sc, lambda x: cond_loss_sq(sc, x) * w(x) ** 2) - risk_target**2
    cov = source_expectation(sc, lambda x: cond_loss(sc, x) * w(x) ** 2) - risk_target
    assert sc.var_weighted_loss == pytest.approx(var_lw, rel=1e-8)
    assert sc.cov_weighted_loss_weight == pytest.approx(cov, rel=1e-8)
    assert sc.optimal_beta == pytest.approx(cov / sc.var_weights, rel=1e-8)
    # Var(l w - β (w - 1)) for a fixed β, directly.
    beta = 0.7
    var_beta = (
        source_expectation(
            sc,
            lambda x: (
                cond_loss_sq(sc, x) * w(x) ** 2
                - 2 * beta * cond_loss(sc, x) * w(x) * (w(x) - 1)
                + beta**2 * (w(x) - 1) ** 2
            ),
        )
        - (risk_target) ** 2
    )
    assert sc.var_control_variate(beta) == pytest.approx(var_beta, rel=1e-8)
    # 1 - ρ² with the optimal β.
    assert sc.variance_ratio == pytest.approx(1 - cov**2 / (sc.var_weights * var_lw), rel=1e-8)
    assert sc.ess_fraction == pytest.approx(1 / source_expectation(sc, lambda x: w(x) ** 2))


@pytest.mark.parametrize("sc", SCENARIOS)
def test_plugin_bias_formula_matches_quadrature(sc):
    w = sc.density_ratio
    beta = sc.optimal_beta

    def residual_times_spread(x):  # E[e (w - 1)² | x], e = l w - R_T - β* (w - 1)
        return (cond_loss(sc, x) * w(x) - sc.target_risk - beta * (w(x) - 1)) * (w(x) - 1) ** 2

    expected = -source_expectation(sc, residual_times_spread) / (50 * sc.var_weights)
    assert sc.plugin_beta_bias(50) == pytest.approx(expected, rel=1e-7)


def test_no_shift_has_unit_weights_and_no_control_variate():
    sc = GaussianShift(shift=0.0)
    assert sc.var_weights == 0.0
    assert np.isnan(sc.optimal_beta)
    assert np.isnan(sc.plugin_beta_bias(10))
    assert sc.variance_ratio == 1.0
    np.testing.assert_array_equal(sc.density_ratio([-1.0, 0.0, 2.0]), 1.0)


def test_samples_have_the_right_shapes_and_weights():
    sc = GaussianShift(shift=0.4)
    x, loss, w = sc.sample_source((3, 7), rng=0)
    assert x.shape == loss.shape == w.shape == (3, 7)
    np.testing.assert_allclose(w, sc.density_ratio(x))
    assert (loss >= 0).all()
    xt, lt = sc.sample_target(1000, rng=1)
    # The target mean is the shift: |mean - δ| < 4 s / √1000.
    assert abs(xt.mean() - 0.4) < 4 / np.sqrt(1000)
    assert lt.shape == (1000,)


@pytest.mark.parametrize(
    "kwargs", [{"scale": 0.0}, {"scale": -1.0}, {"noise": -0.1}, {"shift": np.nan}]
)
def test_bad_scenarios_are_refused(kwargs):
    with pytest.raises(ValueError, match="must be"):
        GaussianShift(**kwargs)
