import re

import numpy as np
import pytest

from bayescv._provenance import child_seeds, created_now, package_version, resolve_seed


def test_resolve_seed_none_in_range():
    seeds = [resolve_seed(None) for _ in range(20)]
    for seed in seeds:
        assert type(seed) is int
        assert 0 <= seed < 2**63
    # 20 draws from 2**63 values: a repeat has probability < 20**2 / 2**63 ~ 4e-17
    assert len(set(seeds)) == len(seeds)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32, 2**63 - 1])
def test_resolve_seed_int_passthrough(seed):
    out = resolve_seed(seed)
    assert out == seed
    assert type(out) is int


def test_resolve_seed_numpy_int_passthrough():
    out = resolve_seed(np.int64(99))
    assert out == 99
    assert type(out) is int


@pytest.mark.parametrize("seed", [-1, -(2**40), 2**63])
def test_resolve_seed_out_of_range(seed):
    with pytest.raises(ValueError, match=re.escape(f"must be in [0, 2**63), got {seed}")):
        resolve_seed(seed)


@pytest.mark.parametrize("flag", [True, False])
def test_resolve_seed_bool(flag):
    with pytest.raises(TypeError, match="not a bool"):
        resolve_seed(flag)


@pytest.mark.parametrize("bad", [1.5, "7", [1]])
def test_resolve_seed_other_types(bad):
    with pytest.raises(TypeError, match="random_state must be None, an int"):
        resolve_seed(bad)


def test_resolve_seed_generator_reproducible():
    a = resolve_seed(np.random.default_rng(2024))
    b = resolve_seed(np.random.default_rng(2024))
    assert a == b
    assert type(a) is int
    assert 0 <= a < 2**63
    # the generator's own first draw below 2**63 is the seed
    assert a == int(np.random.default_rng(2024).integers(2**63))


def test_resolve_seed_generator_advances():
    rng = np.random.default_rng(7)
    first, second = resolve_seed(rng), resolve_seed(rng)
    # two consecutive draws from 2**63 values coincide with probability 2**-63
    assert first != second


def test_resolve_seed_random_state_reproducible():
    a = resolve_seed(np.random.RandomState(5))
    assert a == resolve_seed(np.random.RandomState(5))
    assert 0 <= a < 2**63


def test_child_seeds_deterministic_and_in_range():
    children = child_seeds(42, 8)
    assert children == child_seeds(42, 8)
    assert len(children) == 8
    for c in children:
        assert type(c) is int
        assert 0 <= c < 2**32
    # 8 draws from 2**32 values: a repeat has probability < 8**2 / 2**32 ~ 1.5e-8
    assert len(set(children)) == 8


def test_child_seeds_prefix_stable_and_seed_dependent():
    # child i depends only on (seed, i): asking for more children keeps the first ones
    assert child_seeds(42, 3) == child_seeds(42, 10)[:3]
    assert child_seeds(42, 4) != child_seeds(43, 4)
    assert child_seeds(42, 0) == []


def test_child_seeds_match_seed_sequence_spawn():
    # definition: first uint32 word of each SeedSequence(seed).spawn(n) child
    expected = [
        int(c.generate_state(1, np.uint32)[0]) for c in np.random.SeedSequence(11).spawn(3)
    ]
    assert child_seeds(11, 3) == expected


def test_package_version_and_created_now():
    assert isinstance(package_version(), str)
    assert package_version() != ""
    # ISO 8601 UTC, to the second
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", created_now())
