"""A user's pass over loss tables and the CV runners: what they did, what went wrong."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from bayescv.cv import cross_val_losses, get_loss, losses_from_predictions
from bayescv.losses import (
    from_arrays,
    from_frame,
    from_predictions,
    read_csv,
    read_netcdf,
    to_csv,
    to_netcdf,
)


def test_read_netcdf_gives_back_the_attributes_as_written(tmp_path):
    # A table written and read back compared attribute by attribute: NetCDF returned
    # loss_range as an ndarray and seed as np.int64, so `back.attrs == table.attrs` raised
    # ("truth value of an array is ambiguous") and json.dumps(back.attrs) failed.
    table = from_arrays(
        [0.1, 0.4, 0.2, 0.3],
        [0, 0, 1, 1],
        loss_name="squared",
        loss_range=(0.0, np.inf),
        attrs={"seed": 7, "n_splits": 2},
    )
    to_netcdf(table, tmp_path / "t.nc")
    back = read_netcdf(tmp_path / "t.nc")
    assert back.attrs == table.attrs
    assert type(back.attrs["loss_range"]) is list  # as written: from_arrays stores a list
    assert type(back.attrs["seed"]) is int
    json.dumps({k: v for k, v in back.attrs.items() if k != "loss_range"})  # no numpy scalars
    # the same as read_csv returns
    to_csv(table, tmp_path / "t.csv")
    assert read_csv(tmp_path / "t.csv").attrs == back.attrs
    xr.testing.assert_identical(back, table)


def _probabilities():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + rng.normal(size=60) > 0, "pos", "neg")
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    proba = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="predict_proba")
    return X, y, cv, pd.DataFrame(proba, columns=["neg", "pos"])  # np.unique(y) order


def test_a_frame_of_probabilities_is_read_by_its_class_names():
    # A DataFrame of probabilities whose columns name the classes, in another order than
    # np.unique(y): read by position, every point got the other class's probability.
    X, y, cv, frame = _probabilities()
    reference = cross_val_losses(LogisticRegression(), X, y, cv=cv, loss="brier")
    swapped = frame[["pos", "neg"]]
    for loss in ("brier", "log_loss"):
        ordered = losses_from_predictions(y, frame, cv, loss=loss)
        table = losses_from_predictions(y, swapped, cv, loss=loss)
        np.testing.assert_array_equal(table["loss"].values, ordered["loss"].values)
    brier = losses_from_predictions(y, swapped, cv, loss="brier")
    np.testing.assert_allclose(brier["loss"].values, reference["loss"].values, rtol=1e-12)
    # scikit-learn's binary Brier score of one point, (p_pos - y)^2 = (1 - p_true)^2
    p_true = np.where(y == "pos", frame["pos"], frame["neg"])
    np.testing.assert_allclose(
        brier["loss"].values, ((1 - p_true) ** 2)[brier["index"].values], rtol=1e-12
    )


def test_from_predictions_reads_a_frame_by_class_names_too():
    # from_predictions with a Loss that needs classes, as losses_from_predictions calls it
    _, y, cv, frame = _probabilities()
    loss = get_loss("brier")
    swapped = from_predictions(y, frame[["pos", "neg"]], cv, loss=loss)
    ordered = from_predictions(y, frame, cv, loss=loss)
    np.testing.assert_array_equal(swapped["loss"].values, ordered["loss"].values)
    # an explicit `classes` names the order the loss is computed in; names still rule
    given = from_predictions(y, frame[["pos", "neg"]], cv, loss=loss, classes=["pos", "neg"])
    np.testing.assert_array_equal(given["loss"].values, ordered["loss"].values)


def test_a_frame_not_named_by_class_is_still_read_by_position():
    # columns that are not the class labels (0, 1 for "neg", "pos") keep their positions
    _, y, cv, frame = _probabilities()
    by_position = frame.set_axis([0, 1], axis=1)
    table = losses_from_predictions(y, by_position, cv, loss="brier")
    ordered = losses_from_predictions(y, frame.to_numpy(), cv, loss="brier")
    np.testing.assert_array_equal(table["loss"].values, ordered["loss"].values)


def test_row_numbers_in_an_object_column_are_row_numbers():
    # An `index` column of Python ints in object dtype (a frame after .astype(object), or
    # built from records with None later dropped) was refused as "got dtype <U1": the ints
    # had been turned into text before the integer check.
    frame = pd.DataFrame({"loss": [0.1, 0.2, 0.3, 0.4], "block": [0, 0, 1, 1]})
    frame["index"] = pd.Series([3, 2, 1, 0], dtype=object)
    table = from_frame(frame)
    assert table["index"].dtype == np.int64
    assert table["index"].values.tolist() == [3, 2, 1, 0]  # blocks 0, 1 already in order
    rows = np.array([3, np.int32(2), 1, 0], dtype=object)
    assert from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], index=rows)["index"].dtype == np.int64
    # text and ints beyond int64 are still no row numbers
    for bad in ([3, "a", 1, 0], [3, 2**70, 1, 0]):
        with pytest.raises(ValueError, match="'index' must hold integer row numbers"):
            from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], index=np.array(bad, dtype=object))
