"""Incremental, resumable, locked storage of a study.

A store is a path ``study.nc`` (NetCDF, via h5netcdf) or ``study.zarr`` (needs the optional
``zarr`` package); :func:`check_store_name` refuses other names to write. While a study
runs, finished replicates are written in small NetCDF files ``part-*.nc`` to the directory
``study.nc.parts/`` beside it, each written to a temporary name and renamed into place
(atomic), with ``manifest.json`` holding the study's settings. When every replicate is
done, the whole study is written to ``study.nc`` (again through a temporary name) and the
parts are removed.

One process at a time writes a store: :meth:`StudyStore.locked` takes an exclusive lock on
``study.nc.lock`` (an operating-system file lock, :mod:`filelock`, released by the system
when the process dies, even by SIGKILL) and records the owner's process id and host in
``study.nc.lock.json`` (removed on release; the empty lock file stays, as removing it would
let two processes lock two different files). A second writer is refused with
:class:`StoreInUseError`, which names the owner. Operating-system locks may not hold across
machines on some network file systems: do not point studies on two machines at one store.

A study killed at any moment leaves complete part files only. Started again with the same
store and settings, it loads the stored replicates, computes only the missing ones, and
writes the whole: no replicate is lost or repeated. A finished store can be extended with
more replicates the same way. The settings record the layout, ``store_format``
(:data:`STORE_FORMAT`): a store of another layout, such as one written before store format 1
(dimension ``method``, no ``store_format``), is refused in one line, never resumed or loaded.

Loading a store changes no file. Temporary files carry the host and process id of their
writer (``.part-…nc.<host>-<pid>-<random>.tmp``); on finishing, a store removes the files it
read or wrote, and temporary files left by dead processes of this host, and leaves anything
else alone. A part file that cannot be read (a disk that lost data) stops the study with a
message naming the file to delete: its replicates are then computed again.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import socket
import uuid
import zlib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from bayescv._provenance import created_now

__all__ = [
    "STORE_FORMAT",
    "STORE_SUFFIXES",
    "StoreInUseError",
    "StudyStore",
    "check_format",
    "check_store_name",
    "describe_changes",
    "normalize",
]

#: Layout of what a store holds, recorded in its settings (``store_format``); a store of
#: another format is refused with a message saying why, never resumed or loaded as it is.
STORE_FORMAT = 1

#: Names a study is written under: NetCDF, or a Zarr directory (the optional ``zarr``).
STORE_SUFFIXES = (".nc", ".zarr")

# netCDF4 writes small files about four times faster than h5netcdf (a required dependency);
# both write NetCDF-4 (HDF5) files that either reads.
_ENGINE = "netcdf4" if importlib.util.find_spec("netCDF4") is not None else "h5netcdf"
#: What reading a damaged NetCDF file raises (h5py: OSError; xarray: ValueError, KeyError).
_READ_ERRORS = (OSError, ValueError, KeyError)
_TMP = re.compile(r"\.(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")


class StoreInUseError(RuntimeError):
    """Another process is writing the study store (the message names it)."""


def normalize(ds: xr.Dataset) -> xr.Dataset:
    """Give string variables and coordinates one dtype (numpy ``str``), fresh or read back."""
    coords, data = {}, {}
    for name, var in ds.variables.items():
        if var.dtype.kind in "OST":
            values = np.asarray(var.values)
            values = (
                np.array(values.tolist(), dtype=str)
                if values.dtype.kind == "T"
                else values.astype(str)
            )
            (coords if name in ds.coords else data)[name] = (var.dims, values, var.attrs)
    return ds.assign_coords(coords).assign(data) if coords or data else ds


def check_format(settings: dict[str, Any] | None, dims: Collection[str], where: Any) -> None:
    """Refuse, in one line, a study written with another layout than this bayescv's.

    Parameters
    ----------
    settings : dict or None
        The stored settings (None: the file has none, e.g. a part file).
    dims : collection of str
        The stored dimension names (``ds.sizes``; empty for a manifest).
    where : str or path-like
        The file, named in the message.

    Raises
    ------
    ValueError
        For a store written before store format 1 (a ``method`` dimension, or settings without
        ``store_format``) or with another :data:`STORE_FORMAT`.

    Examples
    --------
    >>> check_format({"store_format": STORE_FORMAT}, ("replicate", "method_name"), "s.nc")
    >>> check_format({"seed": 0}, ("replicate", "method"), "s.nc")
    Traceback (most recent call last):
    ...
    ValueError: s.nc holds a study written before store format 1 (dimension 'method', now 'method_name', and settings of another form): it can be neither resumed nor loaded; run the study again into a new store
    """
    stored = None if settings is None else settings.get("store_format")
    if "method" in dims or (settings is not None and stored is None):
        raise ValueError(
            f"{where} holds a study written before store format 1 (dimension 'method', now "
            "'method_name', and settings of another form): it can be neither resumed nor "
            "loaded; run the study again into a new store"
        )
    if stored is not None and stored != STORE_FORMAT:
        raise ValueError(
            f"{where} holds a study of store format {stored!r}, this bayescv reads format "
            f"{STORE_FORMAT}: run the study again into a new store, or use the bayescv that wrote it"
        )


def describe_changes(
    stored: dict[str, Any], given: dict[str, Any], *, names: tuple[str, str] = ("stored", "now")
) -> str:
    """Name the settings that differ, then each with both values.

    ``"(level): level 0.9 stored, 0.8 now"``. Of a setting that is a dict (the scenario's
    parameters, the method options) only the entries that differ are given
    (``scenario_params.n 40 stored, 44 now``); the values of the hashes (``scenario_hash``,
    ``learner_hash``) only when nothing readable differs; a long value is cut at 60
    characters.

    Parameters
    ----------
    stored, given : dict
        Two studies' settings.
    names : tuple of str, default ("stored", "now")
        What to call each of them.

    Returns
    -------
    str
        The differing keys in parentheses, then ``"key value1 name1, value2 name2"`` per
        key, joined by ``"; "``.

    Examples
    --------
    >>> describe_changes({"level": 0.9, "loss": "brier"}, {"level": 0.8, "loss": "brier"})
    '(level): level 0.9 stored, 0.8 now'
    >>> old, new = {"n": 40, "p": 3}, {"n": 44, "p": 3}
    >>> describe_changes({"scenario_params": old}, {"scenario_params": new})
    '(scenario_params): scenario_params.n 40 stored, 44 now'
    """

    def differ(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
        return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))

    def value(v: Any) -> str:
        text = json.dumps(v, sort_keys=True, default=repr)
        return text if len(text) <= 60 else text[:59] + "…"

    keys = differ(stored, given)
    pairs = []
    for key in [k for k in keys if not k.endswith("_hash")] or keys:
        a, b = stored.get(key), given.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            pairs += [(f"{key}.{k}", a.get(k), b.get(k)) for k in differ(a, b)]
        else:
            pairs.append((key, a, b))
    first, second = names
    return f"({', '.join(keys)}): " + "; ".join(
        f"{k} {value(a)} {first}, {value(b)} {second}" for k, a, b in pairs
    )


def check_store_name(path: str | os.PathLike) -> Path:
    """Refuse a store name that ends neither in ``.nc`` nor in ``.zarr``.

    Any other name was written as NetCDF under it (``x.csv`` held a NetCDF file). Reading
    (:func:`bayescv.compare.load_study`) takes any name, so such stores can still be read.

    Parameters
    ----------
    path : str or path-like
        The store to write.

    Returns
    -------
    pathlib.Path
        `path` as a path.

    Raises
    ------
    ValueError
        For another suffix, or none.

    Examples
    --------
    >>> check_store_name("study.zarr").name
    'study.zarr'
    >>> check_store_name("study.csv")
    Traceback (most recent call last):
    ...
    ValueError: a study store must end in .nc (NetCDF) or .zarr (Zarr), got 'study.csv'
    """
    path = Path(path)
    if path.suffix not in STORE_SUFFIXES:
        raise ValueError(
            f"a study store must end in .nc (NetCDF) or .zarr (Zarr), got {str(path)!r}"
        )
    return path


def _host_tag() -> str:
    return f"{zlib.crc32(socket.gethostname().encode()):08x}"


def _first_line(error: BaseException) -> str:
    text = str(error).splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


class StudyStore:
    """The final file (or Zarr directory), its parts directory and its lock.

    Parameters
    ----------
    path : str or pathlib.Path
        ``*.zarr``, or NetCDF: ``*.nc`` (:func:`check_store_name` refuses other names to
        write; a store of another name written before is still read as NetCDF).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.zarr = self.path.suffix == ".zarr"
        self.parts = self.path.with_name(self.path.name + ".parts")
        self.manifest = self.parts / "manifest.json"
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.owner_path = self.path.with_name(self.path.name + ".lock.json")
        self._seen: set[Path] = set()  # part files read or written: removed by finish()

    # ---------------------------------------------------------------- lock
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock: refuse with :class:`StoreInUseError` if another holds it."""
        from filelock import FileLock, Timeout

        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.lock_path)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise StoreInUseError(self._in_use()) from None
        try:
            owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": created_now()}
            self._atomic_text(self.owner_path, json.dumps(owner))
            yield
        finally:
            self.owner_path.unlink(missing_ok=True)
            lock.release()

    def _in_use(self) -> str:
        try:
            owner = json.loads(self.owner_path.read_text(encoding="utf-8"))
            who = f"process {owner['pid']} on host {owner['host']} (since {owner['since']})"
        except (OSError, ValueError, KeyError, TypeError):
            who = f"another process (its owner file {self.owner_path} is not written yet)"
        return (
            f"the store {self.path} is being written by {who}; wait for it to finish, "
            "or use another path"
        )

    # ---------------------------------------------------------------- settings
    def stored_settings(self) -> dict[str, Any] | None:
        """Return the settings of what is stored, or None for an empty store."""
        if self.manifest.exists():
            try:
                settings = json.loads(self.manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"the store's manifest {self.manifest} is unreadable ({_first_line(error)}); "
                    f"delete the directory {self.parts} (its replicates will be computed again)"
                ) from error
            check_format(settings, (), self.manifest)
            final = self._final_settings() if self.path.exists() else settings
            if final != settings:  # a study copied over the path of an interrupted one
                where = (f"in {self.path.name}", f"in {self.parts.name}")
                raise ValueError(
                    f"the store {self.path} and its unfinished parts hold studies with other "
                    f"settings {describe_changes(final, settings, names=where)}; move "
                    f"{self.path} or {self.parts} away"
                )
            return settings
        if self.path.exists():
            return self._final_settings()
        return None

    def _final_settings(self) -> dict[str, Any]:
        with self._open_final() as ds:
            if "settings" not in ds.attrs:
                raise ValueError(f"{self.path} is not a study written by run_study")
            settings = json.loads(ds.attrs["settings"])
            check_format(settings, ds.sizes, self.path)
            return settings

    def start(self, settings: dict[str, Any]) -> None:
        """Create the parts directory and its manifest (kept if it exists)."""
        self.parts.mkdir(parents=True, exist_ok=True)
        if not self.manifest.exists():
            self._atomic_text(self.manifest, json.dumps(settings, sort_keys=True))

    # ---------------------------------------------------------------- reading
    def _open_final(self) -> xr.Dataset:
        try:
            if self.zarr:
                return xr.open_zarr(self.path, consolidated=False)
            return xr.open_dataset(self.path, engine=_ENGINE)
        except _READ_ERRORS as error:
            raise ValueError(
                f"the study {self.path} is unreadable ({_first_line(error)}); "
                "move it away or use another path"
            ) from error

    def stored_replicates(self) -> set[int]:
        """Return the labels of the stored replicates, reading nothing else.

        Returns
        -------
        set of int
            The replicates of the final file and of the parts (empty for an empty store).

        Raises
        ------
        ValueError
            For an unreadable final or part file (the message names it).
        """
        labels: set[int] = set()
        if self.path.exists():
            with self._open_final() as ds:
                if "replicate" in ds.coords:  # else not a study: run_study says so
                    labels.update(int(i) for i in ds["replicate"].values)
        for part in sorted(self.parts.glob("part-*.nc")) if self.parts.is_dir() else []:
            try:
                with xr.open_dataset(part, engine=_ENGINE) as ds:
                    labels.update(int(i) for i in ds["replicate"].values)
            except _READ_ERRORS as error:
                raise ValueError(self._unreadable(part, error)) from error
        return labels

    def load(self) -> list[xr.Dataset]:
        """Return every stored chunk of replicates: the final file first, then the parts.

        Temporary files (of a write in progress, or one a kill interrupted) are left alone.
        """
        chunks = []
        if self.path.exists():
            chunks.append(self.load_final())
        if self.parts.is_dir():
            for part in sorted(self.parts.glob("part-*.nc")):
                try:
                    ds = xr.load_dataset(part, engine=_ENGINE)
                    if "replicate" not in ds.dims:
                        raise ValueError("it has no replicate dimension")
                except _READ_ERRORS as error:
                    raise ValueError(self._unreadable(part, error)) from error
                check_format(None, ds.sizes, part)
                self._seen.add(part)
                chunks.append(normalize(ds))
        return chunks

    @staticmethod
    def _unreadable(part: Path, error: BaseException) -> str:
        return (
            f"the store's part file {part} is unreadable ({_first_line(error)}); "
            "delete it and run again: its replicates will be computed again"
        )

    def load_final(self) -> xr.Dataset:
        """Return the finished study in memory, refusing one of another layout."""
        with self._open_final() as ds:
            settings = json.loads(ds.attrs["settings"]) if "settings" in ds.attrs else None
            check_format(settings, ds.sizes, self.path)
            return normalize(ds.load())

    def has_parts(self) -> bool:
        """Tell whether there is a manifest, or parts to merge into the final file."""
        return bool(self._seen) or self.manifest.exists()

    # ---------------------------------------------------------------- writing
    def write_part(self, ds: xr.Dataset) -> Path:
        """Write one chunk of finished replicates atomically; return its path."""
        first = int(ds["replicate"].values.min())
        final = self.parts / f"part-{first:09d}-{uuid.uuid4().hex[:8]}.nc"
        tmp = self._tmp(final)
        try:
            ds.to_netcdf(tmp, engine=_ENGINE)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        self._seen.add(final)
        return final

    def finish(self, ds: xr.Dataset) -> None:
        """Write the whole study (atomically for NetCDF), then remove the parts."""
        tmp = self._tmp(self.path)
        if self.zarr:
            try:
                import zarr  # noqa: F401
            except ImportError as error:
                raise ImportError(
                    "a .zarr store needs the optional zarr package: pip install zarr"
                ) from error
            # variable-length strings: Zarr v3 has no stable spec for fixed-length ones
            strings = {n: v.astype(object) for n, v in ds.variables.items() if v.dtype.kind == "U"}
            coords = {n: v for n, v in strings.items() if n in ds.coords}
            data = {n: v for n, v in strings.items() if n not in ds.coords}
            try:
                ds.assign_coords(coords).assign(data).to_zarr(tmp, mode="w", consolidated=False)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            if self.path.exists():
                shutil.rmtree(self.path)
        else:
            try:
                ds.to_netcdf(tmp, engine=_ENGINE)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        os.replace(tmp, self.path)
        self._remove_parts()

    def _remove_parts(self) -> None:
        """Remove what this store read or wrote and what dead writers left; keep the rest."""
        if not self.parts.is_dir():
            return
        for path in self._seen:
            path.unlink(missing_ok=True)
        self._seen.clear()
        self.manifest.unlink(missing_ok=True)
        for tmp in self.parts.glob(".*.tmp"):
            if _abandoned(tmp):
                tmp.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: files of another writer stay
            self.parts.rmdir()

    def _tmp(self, path: Path) -> Path:
        """Return a temporary name beside `path`, tagged with this host and process."""
        tag = f"{_host_tag()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        return path.with_name(f".{path.name}.{tag}.tmp")

    def _atomic_text(self, path: Path, text: str) -> None:
        tmp = self._tmp(path)
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def _abandoned(tmp: Path) -> bool:
    """Tell whether a temporary file was left by a process of this host that no longer runs."""
    match = _TMP.search(tmp.name)
    if match is None or match["host"] != _host_tag() or os.name == "nt":
        return False  # another host's, or a name not ours: leave it
    try:
        os.kill(int(match["pid"]), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False
