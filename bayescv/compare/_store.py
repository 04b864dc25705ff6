"""Incremental, resumable storage of a study.

A store is a path ``study.nc`` (NetCDF, via h5netcdf) or ``study.zarr`` (needs the optional
``zarr`` package). While a study runs, finished replicates are written in small NetCDF
files ``part-*.nc`` to the directory ``study.nc.parts/`` beside it, each written to a
temporary name and renamed into place (atomic), with ``manifest.json`` holding the study's
settings. When every replicate is done, the whole study is written to ``study.nc`` (again
through a temporary name) and the parts directory is removed.

A study killed at any moment leaves complete part files only (a half-written temporary
file is ignored and deleted). Started again with the same store and settings, it loads the
stored replicates, computes only the missing ones, and writes the whole: no replicate is
lost or repeated. A finished store can be extended with more replicates the same way.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["StudyStore", "normalise"]

# netCDF4 writes small files about four times faster than h5netcdf (a required dependency);
# both write NetCDF-4 (HDF5) files that either reads.
_ENGINE = "netcdf4" if importlib.util.find_spec("netCDF4") is not None else "h5netcdf"


def normalise(ds: xr.Dataset) -> xr.Dataset:
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


class StudyStore:
    """The final file (or Zarr directory) and its parts directory.

    Parameters
    ----------
    path : str or pathlib.Path
        ``*.nc`` (or any name: NetCDF) or ``*.zarr``.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.zarr = self.path.suffix == ".zarr"
        self.parts = self.path.with_name(self.path.name + ".parts")
        self.manifest = self.parts / "manifest.json"

    # ---------------------------------------------------------------- settings
    def stored_settings(self) -> dict[str, Any] | None:
        """Return the settings of what is stored, or None for an empty store."""
        if self.manifest.exists():
            return json.loads(self.manifest.read_text(encoding="utf-8"))
        if self.path.exists():
            with self._open_final() as ds:
                return json.loads(ds.attrs["settings"])
        return None

    def start(self, settings: dict[str, Any]) -> None:
        """Create the parts directory and its manifest (kept if it exists)."""
        self.parts.mkdir(parents=True, exist_ok=True)
        if not self.manifest.exists():
            self._atomic_text(self.manifest, json.dumps(settings, sort_keys=True))

    # ---------------------------------------------------------------- reading
    def _open_final(self) -> xr.Dataset:
        if self.zarr:
            return xr.open_zarr(self.path, consolidated=False)
        return xr.open_dataset(self.path, engine=_ENGINE)

    def load(self) -> list[xr.Dataset]:
        """Return every stored chunk of replicates: the final file first, then the parts."""
        chunks = []
        if self.path.exists():
            with self._open_final() as ds:
                chunks.append(normalise(ds.load()))
        if self.parts.is_dir():
            for tmp in self.parts.glob(".*.tmp"):  # a write interrupted by a kill
                tmp.unlink()
            for part in sorted(self.parts.glob("part-*.nc")):
                chunks.append(normalise(xr.load_dataset(part, engine=_ENGINE)))
        return chunks

    # ---------------------------------------------------------------- writing
    def write_part(self, ds: xr.Dataset) -> Path:
        """Write one chunk of finished replicates atomically; return its path."""
        first = int(ds["replicate"].values.min())
        final = self.parts / f"part-{first:09d}-{uuid.uuid4().hex[:8]}.nc"
        tmp = self.parts / f".{final.name}.tmp"
        ds.to_netcdf(tmp, engine=_ENGINE)
        os.replace(tmp, final)
        return final

    def finish(self, ds: xr.Dataset) -> None:
        """Write the whole study (atomically for NetCDF), then remove the parts."""
        tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
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
            ds.assign_coords(coords).assign(data).to_zarr(tmp, mode="w", consolidated=False)
            if self.path.exists():
                shutil.rmtree(self.path)
        else:
            ds.to_netcdf(tmp, engine=_ENGINE)
        os.replace(tmp, self.path)
        if self.parts.is_dir():
            shutil.rmtree(self.parts)

    @staticmethod
    def _atomic_text(path: Path, text: str) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
