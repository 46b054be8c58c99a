"""Atomic writers: content, permissions like a plain open(), strict JSON."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from rlscale.files._atomic import write_bytes_atomic, write_json_atomic, write_text_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_gets_umask_permissions_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        atomic = write_text_atomic(tmp_path / "atomic.txt", "x")
    finally:
        os.umask(old)
    assert _mode(atomic) == _mode(plain) == 0o644


def test_replacing_keeps_the_old_files_permissions(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old")
    path.chmod(0o640)
    write_text_atomic(path, "new")
    assert path.read_text() == "new"
    assert _mode(path) == 0o640


def test_no_temporary_file_is_left_behind_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "dir-in-the-way"
    (target / "child").mkdir(parents=True)  # os.replace cannot replace a non-empty dir
    with pytest.raises(OSError):
        write_bytes_atomic(target, b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir-in-the-way"]


def test_json_is_strict_and_non_finite_numbers_are_strings(tmp_path: Path) -> None:
    path = write_json_atomic(tmp_path / "r.json", {"a": np.float64(np.inf), "b": [np.nan],
                                                  "c": -float("inf"), "d": np.int64(3)})
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == {"a": "inf", "b": ["nan"], "c": "-inf", "d": 3}


def test_render_figure_draws_a_laid_out_figure_once_with_the_same_pixels() -> None:
    """After ``tight_layout`` the figure keeps a placeholder layout engine, for which
    ``savefig`` ran a second, disabled draw; ``render_figure`` skips it (issue 26) and must
    give savefig's bytes, while a live engine is left alone."""
    import io

    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from rlscale.files._atomic import render_figure

    def figure(**kw):
        fig, axes = plt.subplots(2, 2, **kw)
        for ax in axes.flat:
            ax.plot([1.0, 10.0, 100.0], [1.0, 3.0, 2.0], label="a")
            ax.set_xscale("log")
            ax.set_title("title")
            ax.legend(loc="best")  # placed at draw time
        return fig

    plain, fast = figure(), figure()
    for fig in (plain, fast):
        fig.tight_layout()
    buf = io.BytesIO()
    plain.savefig(buf, format="png", dpi=60)
    draws = []
    fast.canvas.mpl_connect("draw_event", draws.append)
    assert render_figure(fast, "png", dpi=60) == buf.getvalue()
    assert fast.get_layout_engine() is None and len(draws) == 1
    live = figure(layout="constrained")
    render_figure(live, "png", dpi=60)
    assert isinstance(live.get_layout_engine(), ConstrainedLayoutEngine)
    for fig in (plain, fast, live):
        plt.close(fig)
