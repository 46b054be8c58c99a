"""benchmarks/report_identity.py: two results.json compared leaf by leaf, clocks aside."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.report_identity import differences, main


def _doc(**over):
    doc = {"seconds": 3.0, "timings": {"fit": 1.0}, "cpu_total": 9.0,
           "fit": {"seconds": 0.5, "a": 1.0, "rows": [{"b": 2.0, "ok": True}], "name": "x"}}
    doc["fit"].update(over)
    return doc


def test_clocks_are_ignored_everywhere() -> None:
    new = _doc(seconds=7.0)
    new.update(seconds=1.0, timings={"fit": 5.0}, cpu_total=1.0)
    assert list(differences(_doc(), new)) == []


def test_every_kind_of_difference_is_named() -> None:
    new = _doc(a=1.0 + 2e-16, rows=[{"b": 2.0, "ok": False}, {}], name="y")
    new["extra"] = 1
    found = {path: (a, b) for path, a, b in differences(_doc(), new)}
    assert found == {"fit.a": (1.0, 1.0 + 2e-16), "fit.rows (length)": (1, 2),
                     "fit.rows[0].ok": (True, False), "fit.name": ("x", "y"),
                     "extra": ("<absent>", 1)}
    assert "fit.a" not in {p for p, *_ in differences(_doc(), new, rtol=1e-12)}


def test_exit_status(tmp_path: Path) -> None:
    ref, same, other = (tmp_path / f"{n}.json" for n in ("ref", "same", "other"))
    ref.write_text(json.dumps(_doc()))
    same.write_text(json.dumps(_doc(seconds=99.0)))
    other.write_text(json.dumps(_doc(a=2.0)))
    assert main([str(ref), str(same)]) == 0
    assert main([str(ref), str(other)]) == 1
