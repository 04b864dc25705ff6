"""Studies of different settings stacked along ``replicate`` are refused by ``summarize``.

``xr.concat`` keeps the first study's attrs, so a 90 % study stacked on a 95 % one, or
studies of two learners, were summarised as the first study, silently. Each replicate now
records an id of its study's settings but the seed (``settings_id``); ``summarize`` refuses
more than one. Stores written before the id existed still resume and load.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LogisticRegression

from bayescv.compare import BatesLogistic, load_study, run_study, summarize
from bayescv.compare._settings import settings_id
from bayescv.compare._store import StudyStore

TINY = BatesLogistic(n=40, p=3, n_splits=4)
METHODS = ["naive_points"]


def _study(random_state, **kwargs):
    return run_study(TINY, methods=METHODS, n_replicates=2, random_state=random_state, **kwargs)


def _stack(*studies):
    stacked = xr.concat(studies, dim="replicate")
    return stacked.assign_coords(replicate=np.arange(stacked.sizes["replicate"]))


def _ids(study):
    return np.unique(study["settings_id"].values).tolist()


def test_studies_of_two_levels_stacked_are_refused():
    """A 95 % and a 90 % study of different seeds, stacked and renumbered, are refused.

    Labels, seeds and block counts all pass, and the attrs are the first study's: before,
    the stack was summarised as one 95 % study. The message names the number of settings,
    the replicates of each and that the attrs describe the first study only.
    """
    stacked = _stack(_study(0), _study(1, level=0.9))
    with pytest.raises(ValueError, match=r"come from 2 studies of different settings") as info:
        summarize(stacked)
    message = str(info.value)
    assert "(replicates [0, 1])" in message
    assert "(replicates [2, 3])" in message
    assert "level 0.95) describe only the first study" in message
    assert "Summarise each study on its own" in message


def test_studies_of_two_learners_stacked_are_refused():
    """Studies of two learners (same level, scenario and methods) stacked are refused.

    The learner is recorded only in the attrs, which are the first study's.
    """
    other = _study(1, learner=LogisticRegression(C=1.0))
    with pytest.raises(ValueError, match=r"2 studies of different settings"):
        summarize(_stack(_study(0), other))


def test_the_message_without_the_attrs_of_a_study():
    """Without settings in the attrs (dropped by the user), the refusal stays, without the note.

    The note on the attrs is given only where they show which study they describe.
    """
    stacked = _stack(_study(0), _study(1, level=0.9))
    stacked.attrs = {}
    with pytest.raises(ValueError, match="2 studies of different settings") as info:
        summarize(stacked)
    assert "attrs" not in str(info.value)


def test_studies_of_one_setting_and_other_seeds_stack():
    """Studies of the same settings and different seeds share one id and summarise together.

    The seed is left out of the id: such studies are what users are told to stack.
    """
    first, second = _study(0), _study(1)
    assert _ids(first) == _ids(second)
    assert len(_ids(first)[0]) == 12
    assert summarize(_stack(first, second)).attrs["n_replicates"] == 4


def test_a_stack_without_ids_passes_as_before():
    """Studies from files written before the id existed (no ``settings_id``) pass as before.

    Nothing per replicate tells their settings apart: the check cannot apply.
    """
    old = [s.drop_vars("settings_id") for s in (_study(0), _study(1, level=0.9))]
    assert summarize(_stack(*old)).attrs["n_replicates"] == 4


def test_the_id_does_not_depend_on_n_jobs_or_on_resuming(tmp_path):
    """The id is the same for n_jobs 1 and 2, and for a resumed store and an uninterrupted run.

    Results must not depend on how they were computed (DESIGN.md), else a study resumed or
    run in parallel could not be stacked with one run otherwise.
    """
    fresh = run_study(TINY, methods=METHODS, n_replicates=3, random_state=4, n_jobs=1)
    parallel = run_study(TINY, methods=METHODS, n_replicates=3, random_state=4, n_jobs=2)
    store = tmp_path / "s.nc"
    run_study(TINY, methods=METHODS, n_replicates=2, random_state=4, store=store)
    resumed = run_study(TINY, methods=METHODS, n_replicates=3, random_state=4, store=store)
    assert resumed.attrs["replicates_loaded"] == 2
    ids = _ids(fresh)
    assert len(ids) == 1
    assert _ids(parallel) == ids
    assert _ids(resumed) == ids
    assert _ids(load_study(store)) == ids
    assert ids == [settings_id(json.loads(fresh.attrs["settings"]))]


def test_an_old_finished_store_loads_and_resumes_with_one_id(tmp_path):
    """A finished store without ``settings_id`` loads, and resumes into one id.

    Such a file was written before replicates recorded the id; its settings were checked
    equal by the resume, so its replicates take the id of the call, and concatenation with
    the new replicates works. ``load_study`` computes the id from the settings in its attrs.
    """
    store = tmp_path / "s.nc"
    study = run_study(TINY, methods=METHODS, n_replicates=2, random_state=5, store=store)
    ids = _ids(study)
    study.drop_vars("settings_id").to_netcdf(store, engine="h5netcdf")
    assert "settings_id" not in xr.load_dataset(store, engine="h5netcdf").variables
    assert _ids(load_study(store)) == ids
    resumed = run_study(TINY, methods=METHODS, n_replicates=3, random_state=5, store=store)
    assert resumed.attrs["replicates_loaded"] == 2
    assert _ids(resumed) == ids
    assert _ids(load_study(store)) == ids


def test_old_part_files_resume_with_one_id(tmp_path):
    """An unfinished store whose part files lack ``settings_id`` resumes into one id.

    The parts (and the manifest) are written as an interrupted run of an older version left
    them; the result equals an uninterrupted run, id included.
    """
    store = tmp_path / "s.nc"
    done = run_study(TINY, methods=METHODS, n_replicates=2, random_state=6)
    old = StudyStore(store)
    old.start(json.loads(done.attrs["settings"]))
    old.write_part(done.drop_vars("settings_id").drop_attrs())
    resumed = run_study(TINY, methods=METHODS, n_replicates=3, random_state=6, store=store)
    assert resumed.attrs["replicates_loaded"] == 2
    fresh = run_study(TINY, methods=METHODS, n_replicates=3, random_state=6)
    assert _ids(resumed) == _ids(fresh) == _ids(done)
    xr.testing.assert_equal(resumed["settings_id"], fresh["settings_id"])
