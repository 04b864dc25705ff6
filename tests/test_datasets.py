import numpy as np
import pandas as pd
import pytest

from bayescv.datasets import load_dataframe, load_star


@pytest.fixture(scope="module")
def star():
    return load_star()


def test_star_shape_matches_its_documentation(star):
    # Ecdat::Star documents 5,748 pupils; the kindergarten extract has 79 schools (schidkn)
    assert star.data.shape[0] == len(star.target) == len(star.groups) == 5748
    assert star.groups.nunique() == 79
    sizes = star.groups.value_counts()
    assert sizes.min() >= 2
    assert (
        star.data.dtypes.map(lambda d: d.kind == "f").all()
        or star.data.select_dtypes("number").shape == star.data.shape
    )
    assert not star.data.isna().any().any()
    assert "GPL" in star.DESCR
    assert "STAR" in star.citation


def test_star_targets(star):
    math = load_star(target="math")
    np.testing.assert_array_equal(math.target, star.frame["tmathssk"].astype(float))
    # total = math + reading, by construction
    np.testing.assert_array_equal(star.target, star.frame["tmathssk"] + star.frame["treadssk"])
    with pytest.raises(ValueError, match="unknown target"):
        load_star(target="science")


def test_load_dataframe_encodes_categoricals():
    df = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 4.0],
            "colour": ["red", "blue", "red", "blue"],
            "y": [1, 2, 3, 4],
            "site": list("aabb"),
        }
    )
    bunch = load_dataframe(df, target="y", source="site")
    assert bunch.feature_names == ["x", "colour_red"]
    np.testing.assert_array_equal(bunch.data["colour_red"], [1.0, 0.0, 1.0, 0.0])
    assert bunch.groups.tolist() == list("aabb")
    assert load_dataframe(df, target="y", features=["x"]).groups is None


def test_load_dataframe_errors():
    df = pd.DataFrame({"x": [1.0, np.nan, 3.0], "y": [1, 2, 3], "site": ["a", "a", "b"]})
    with pytest.raises(ValueError, match="missing values in column"):
        load_dataframe(df, target="y")
    with pytest.raises(ValueError, match=r"\['nope'\] not in the frame"):
        load_dataframe(df, target="nope")
    ok = df.fillna(0.0)
    with pytest.raises(ValueError, match="single row"):
        load_dataframe(ok, target="y", source="site")
    with pytest.raises(ValueError, match="empty input"):
        load_dataframe(ok.iloc[:0], target="y")
