"""The numba log-density that nutpie samples equals the PyMC model, its specification.

:mod:`bayescv.bayes._density` transcribes the PyMC model of :mod:`bayescv.bayes.model`
(priors, Jacobians of the sampled coordinates, the three likelihood potentials) by hand,
with a hand-written reverse-mode gradient. Here both are evaluated at random points of the
sampled coordinates, for both schemes and every replicate kind, on loss tables from real CV
runs (a ridge regression; random K-fold and leave-one-source-out, unequal block sizes), and
PyMC's compiled ``logp`` and ``dlogp`` are the reference.

One PyMC model is built and compiled per scheme (one K each) and the data of every table are
swapped into its data containers, as :func:`bayescv.bayes.fit` does with its model cache:
compiling a model costs 5-10 s, the swap nothing.
"""

import ctypes
import math

import numpy as np
import pytest
from replicated_tables import N_FOLDS, SIZES, make_tables

from bayescv.bayes import Priors
from bayescv.bayes._stats import collapse
from bayescv.bayes.model import CompiledModel, model_data

pytest.importorskip("pymc")
pytest.importorskip("numba")

# After the importorskips: the module imports numba.
from bayescv.bayes._density import (
    SCALARS,
    buffer,
    callbacks,
    coordinate_slices,
    logp_and_grad,
    pack,
)

SCHEMES = ("source", "random")
KINDS = ("single", "repeat", "independent", "bootstrap")


@pytest.fixture(scope="module")
def pymc_functions():
    """Per scheme: the CompiledModel, its compiled ``logp`` and ``dlogp`` (built on first use)."""
    cache = {}

    def get(scheme, data):
        if scheme not in cache:
            compiled = CompiledModel(scheme, data)
            model = compiled.model
            cache[scheme] = (compiled, model.compile_logp(), model.compile_dlogp())
        compiled, logp, dlogp = cache[scheme]
        compiled.set_data(data)
        for name, value in data.items():  # the containers hold this table's data
            np.testing.assert_array_equal(compiled.model[name].get_value(), value)
        return compiled.model, logp, dlogp

    return get


def _point(model, slices, x):
    """PyMC point dict of the flat coordinates `x` (shapes from the model's initial point)."""
    shapes = {name: np.shape(value) for name, value in model.initial_point().items()}
    assert set(shapes) == set(slices)
    return {name: x[where].reshape(shapes[name]) for name, where in slices.items()}


def _pymc_grad(model, slices, dlogp, point):
    """PyMC's gradient (ordered as ``model.value_vars``) laid out as `coordinate_slices`."""
    flat = np.asarray(dlogp(point), dtype=float)
    out = np.empty(flat.size)
    at = 0
    for var in model.value_vars:
        where = slices[var.name]
        size = where.stop - where.start
        out[where] = flat[at : at + size]
        at += size
    assert at == flat.size
    return out


def _compare(model, logp, dlogp, scheme, data, seed):
    source = scheme == "source"
    k = int(data["n"].size)
    slices = coordinate_slices(source, k)
    n_dim = slices["rho_b_logodds__"].stop
    assert n_dim == sum(np.size(v) for v in model.initial_point().values())
    assert [v.name for v in model.value_vars] == list(slices)
    vec, scal, scatter = pack(data)
    rng = np.random.default_rng(seed)
    # Around the data-centred origin of the parameterisation and well away from it.
    xs = [np.zeros(n_dim)] + [s * rng.standard_normal(n_dim) for s in (0.5, 1.0, 1.0, 2.0)]
    ours, theirs = [], []
    for x in xs:
        point = _point(model, slices, x)
        value, grad = logp_and_grad(x, source, vec, scal, scatter)
        expected = float(logp(point))
        assert np.isfinite(value)
        assert np.isfinite(expected)
        np.testing.assert_allclose(
            grad, _pymc_grad(model, slices, dlogp, point), rtol=1e-9, atol=1e-10
        )
        ours.append(value)
        theirs.append(expected)
    ours, theirs = np.array(ours), np.array(theirs)
    # Every constant is kept, so the values agree, up to PyMC's own rounding: its HalfStudentT
    # logp is off the exact log 2 + lgamma((ν+1)/2) − lgamma(ν/2) − ½ log(νπ) − log σ
    # − (ν+1)/2 log1p(x²/(νσ²)) by a constant, which the numba code does not copy (its
    # `pt.log(2)` of an integer constant is evaluated in float32: log(float32(2)) − log 2 =
    # 1.9e-9, once per block scale, so 1e-8 at K = 5). Hence 1e-6 on the values ...
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    # ... and 1e-9 on their differences between points, which is all a sampler sees.
    np.testing.assert_allclose(ours[1:] - ours[0], theirs[1:] - theirs[0], rtol=0, atol=1e-9)
    return ours - theirs


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_numba_density_and_gradient_equal_pymc(pymc_functions, scheme, kind):
    observed, boot = make_tables(scheme, kind)
    stats = collapse(observed, boot, scheme=scheme)
    assert stats.kind == kind
    assert stats.scheme == scheme
    data = model_data(stats, None)
    k = int(data["n"].size)
    assert k == (SIZES.size if scheme == "source" else N_FOLDS)
    # Unequal block sizes (every kind here allows them).
    assert np.unique(data["n"]).size > 1
    _, scal, scatter = pack(data)
    df, weight = scal[SCALARS.index("scatter_df")], scal[SCALARS.index("scatter_weight")]
    if kind == "single":
        assert df == weight == 0.0
        assert not scatter.any()
    else:
        # The scatter term of replicated block means is exercised, with a non-zero scatter.
        assert df != 0.0 or weight != 0.0
        assert np.abs(scatter).max() > 0.0
    if kind == "repeat":
        assert data["scatter_tau"] == 1.0  # the τ² part of the scatter is on, too
    if kind == "bootstrap":
        # Resampled rows: the duplicated-point term and the (1 − 1/n_k) factor are on.
        assert (data["scatter_extra"] > 0).all()
        assert (data["scatter_nu_factor"] < 1).all()
    model, logp, dlogp = pymc_functions(scheme, data)
    _compare(model, logp, dlogp, scheme, data, seed=KINDS.index(kind))


@pytest.mark.parametrize(
    ("scheme", "kind"), [("source", "bootstrap"), ("random", "repeat"), ("source", "single")]
)
def test_numba_density_equals_pymc_under_other_priors(pymc_functions, scheme, kind):
    # Every prior parameter is a data container of the PyMC model and a packed value here.
    priors = Priors(mu0_sd=0.7, tau_sd=0.4, within_shape=3.5, gamma_sd=2.5, gamma_df=6.0)
    data = model_data(collapse(*make_tables(scheme, kind), scheme=scheme), priors)
    assert data["gamma_df"] == 6.0
    model, logp, dlogp = pymc_functions(scheme, data)
    _compare(model, logp, dlogp, scheme, data, seed=99)


def _ptr(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


@pytest.mark.parametrize(("scheme", "kind"), [("source", "bootstrap"), ("random", "repeat")])
def test_c_callback_over_the_buffer_is_logp_and_grad(scheme, kind):
    # The C callback nutpie calls unpacks `buffer` and calls logp_and_grad: the same function,
    # transcribed; so its value and gradient are logp_and_grad's, bit for bit.
    source = scheme == "source"
    data = model_data(collapse(*make_tables(scheme, kind), scheme=scheme), None)
    k = int(data["n"].size)
    n_dim = coordinate_slices(source, k)["rho_b_logodds__"].stop
    buf = buffer(data, source)
    assert buf.dtype == np.float64
    assert buf.flags["C_CONTIGUOUS"]
    assert buf.shape == (3 + len(SCALARS) + 9 * k + k * k,)
    func = callbacks()["logp"].ctypes
    vec, scal, scatter = pack(data)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x = np.ascontiguousarray(rng.standard_normal(n_dim))
        grad = np.full(n_dim, np.nan)
        logp = np.full(1, np.nan)
        code = func(n_dim, _ptr(x), _ptr(grad), _ptr(logp), buf.ctypes.data)
        assert code == 0
        value, expected = logp_and_grad(x, source, vec, scal, scatter)
        assert logp[0] == value
        np.testing.assert_array_equal(grad, expected)
    # A vector of the wrong length is refused, nothing written.
    logp[0] = math.pi
    code = func(n_dim + 1, _ptr(x), _ptr(grad), _ptr(logp), buf.ctypes.data)
    assert code == -1
    assert logp[0] == math.pi


def test_c_callback_reports_a_point_where_the_density_is_undefined(pymc_functions):
    # CVR, block scales far above the within-block sd (gamma_sd_z = 20) and ρ rounded onto
    # its lower bound −1/(K−1) (log-odds −40): V = diag(·) + (ρ/c) s sᵀ is singular, and
    # PyMC's logp is nan. NUTS reaches such points in its first steps; the callback must tell
    # nutpie (a non-zero code, a divergence) instead of returning 0 with logp and grad unset.
    data = model_data(collapse(*make_tables("random", "independent")), None)
    model, logp, _ = pymc_functions("random", data)
    slices = coordinate_slices(False, N_FOLDS)
    x = np.array([0.0, 0.0, 20.0, -40.0])
    assert not np.isfinite(logp(_point(model, slices, x)))
    grad, value = np.full(x.size, np.nan), np.full(1, np.nan)
    buf = buffer(data, False)
    code = callbacks()["logp"].ctypes(x.size, _ptr(x), _ptr(grad), _ptr(value), buf.ctypes.data)
    assert code != 0
