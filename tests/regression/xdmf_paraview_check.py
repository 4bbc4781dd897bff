"""Opens a fracmfg XDMF sidecar with ParaView's own XDMF reader and checks what it reads
against the HDF5 file, read with h5py: at every time step ParaView lists, every array of
every grid must hold one value per grid point, equal to the level of that time in
/fields/<name>/values (its component, for fields with several), and the points must sit at
origin + index * spacing of the field's attributes.

    pvpython tests/regression/xdmf_paraview_check.py results/crowd_1d.xmf [--levels N]

--levels N: expect N time steps. Prints one line per grid and "xdmf_paraview_check: OK"
when everything matches; exits 1 with the first mismatches otherwise, 77 (the skip code of
the tests) when ParaView's Python modules are missing.
"""
import argparse
import os
import sys

try:
    from paraview import servermanager as sm
    from paraview.simple import XDMFReader
except ImportError as e:  # run with a Python without ParaView
    print(f"xdmf_paraview_check: SKIP: ParaView's Python modules are missing ({e}); "
          "install Debian's paraview package and run with pvpython", file=sys.stderr)
    sys.exit(77)

import h5py
import numpy as np
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def fields_of(h5):
    """{array name: (field, component index or None)} and the fields' data."""
    arrays = {}
    for name, group in h5["fields"].items():
        values = group["values"]
        names = [text(c) for c in values.attrs["component_names"]]
        dof = int(values.attrs["dof"])
        for c, comp in enumerate(names):
            arrays[comp] = (name, c if dof > 1 else None)
    return arrays


def leaves(data):
    """(grid name, dataset) of every leaf of a composite dataset, or the dataset itself."""
    if not data.IsA("vtkMultiBlockDataSet"):
        return [("", data)]
    out = []
    for i in range(data.GetNumberOfBlocks()):
        block = data.GetBlock(i)
        if block is None:
            continue
        name = ""
        meta = data.GetMetaData(i)
        if meta is not None and meta.Has(vtkCompositeDataSet.NAME()):
            name = meta.Get(vtkCompositeDataSet.NAME())
        if block.IsA("vtkMultiBlockDataSet"):
            out.extend(leaves(block))
        else:
            out.append((name, block))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("xmf")
    parser.add_argument("--levels", type=int, default=None)
    args = parser.parse_args()
    h5_path = os.path.splitext(args.xmf)[0] + ".h5"
    errors = []
    with h5py.File(h5_path, "r") as h5:
        arrays = fields_of(h5)
        reader = XDMFReader(FileNames=[args.xmf])
        reader.UpdatePipelineInformation()
        times = reader.TimestepValues
        times = list(times) if hasattr(times, "__len__") else [times]
        if args.levels is not None and len(times) != args.levels:
            errors.append(f"ParaView lists {len(times)} time steps, expected {args.levels}")
        checked = {}
        for t in times:
            reader.UpdatePipeline(t)
            for grid, data in leaves(sm.Fetch(reader)):
                points = data.GetNumberOfPoints()
                pd = data.GetPointData()
                for i in range(pd.GetNumberOfArrays()):
                    array = pd.GetArray(i)
                    name = array.GetName()
                    if name not in arrays:
                        errors.append(f"t={t}: array '{name}' of grid '{grid}' is no field of {h5_path}")
                        continue
                    field, comp = arrays[name]
                    group = h5["fields"][field]
                    ftimes = group["time"][...]
                    level = np.flatnonzero(np.isclose(ftimes, t, rtol=0, atol=1e-12 * max(1.0, abs(t))))
                    if level.size != 1:
                        continue  # the field has no level at this time (another field of the grid has)
                    values = group["values"][int(level[0])]
                    if comp is not None:
                        values = values[..., comp]
                    want = values.ravel()  # natural order, x fastest: VTK's point order
                    got = np.array([array.GetValue(k) for k in range(array.GetNumberOfTuples())])
                    if array.GetNumberOfComponents() != 1 or got.size != want.size or points != want.size:
                        errors.append(f"t={t}: '{name}' has {got.size} values on {points} points, "
                                      f"the field has {want.size} per level")
                        continue
                    diff = float(np.max(np.abs(got - want))) if want.size else 0.0
                    if diff != 0.0:
                        errors.append(f"t={t}: '{name}' differs from {field} level {level[0]} by {diff:g}")
                    # Placement: point index (i, j, k) at origin + (i, j, k) * spacing.
                    attrs = group["values"].attrs
                    origin = np.zeros(3)
                    spacing = np.ones(3)
                    dim = int(attrs["dim"])
                    origin[:dim] = attrs["origin"]
                    spacing[:dim] = attrs["spacing"]
                    sizes = [int(s) for s in attrs["global_size"]] + [1] * (3 - dim)
                    last = (sizes[0] - 1, sizes[1] - 1, sizes[2] - 1)
                    for idx, pid in (((0, 0, 0), 0), ((min(1, last[0]), 0, 0), min(1, points - 1)),
                                     (last, points - 1)):
                        want_xyz = origin + np.array(idx) * spacing
                        got_xyz = np.array(data.GetPoint(pid))
                        if np.max(np.abs(got_xyz - want_xyz)) > 1e-12 * max(1.0, np.max(np.abs(want_xyz))):
                            errors.append(f"t={t}: point {pid} of '{name}' at {tuple(got_xyz)}, "
                                          f"expected {tuple(want_xyz)}")
                    checked[name] = checked.get(name, 0) + 1
        for name, count in sorted(checked.items()):
            print(f"xdmf_paraview_check: {name}: {count} level(s) equal to the HDF5 data")
        for name in arrays:
            if name not in checked:
                errors.append(f"field component '{name}' never appeared in ParaView")
    if errors:
        for e in errors[:20]:
            print(f"xdmf_paraview_check: {e}", file=sys.stderr)
        return 1
    print("xdmf_paraview_check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
