"""Rich display of rlscale's results in notebooks, and conversion to pandas.

Results render themselves in Jupyter (``_repr_html_``) as small HTML tables and
convert to a :class:`pandas.DataFrame` with ``to_frame()``.  pandas is not a
dependency of rlscale: :func:`data_frame` imports it on first use and, when it is
absent, raises an :class:`ImportError` naming the extra that installs it.
This module imports nothing of rlscale's and nothing optional at import time.
"""

from __future__ import annotations

import html
import importlib
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["data_frame", "format_value", "html_table", "latex_math"]


def format_value(value: Any) -> str:
    """A short, exact-enough text for one table cell.

    Floats get six significant digits (``inf`` and ``nan`` spelled out), mappings
    ``key=value`` pairs, ``None`` an empty cell.

    Examples
    --------
    >>> format_value(0.123456789), format_value(12), format_value(None)
    ('0.123457', '12', '')
    >>> format_value({"E": 500.0, "t": 95.47})
    'E=500, t=95.47'
    >>> format_value(float("inf"))
    'inf'
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        return repr(v) if not math.isfinite(v) else f"{v:.6g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items())
    if isinstance(value, (tuple, list)) and all(isinstance(v, numbers.Real) for v in value):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def html_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
               notes: Iterable[str] = ()) -> str:
    """An HTML table with a caption; every cell is escaped.

    Parameters
    ----------
    title : str
        Caption of the table.
    columns : sequence of str
        Column headers.
    rows : iterable of sequences
        One sequence of cell values per row, in the order of ``columns``;
        values are formatted by :func:`format_value`.
    notes : iterable of str
        Lines shown under the table (solver notes, reasons).

    Examples
    --------
    >>> print(html_table("fit", ["parameter", "value"], [["alpha", 0.5]], notes=["a < b"]))
    <table class="rlscale-table">
    <caption>fit</caption>
    <thead><tr><th>parameter</th><th>value</th></tr></thead>
    <tbody>
    <tr><td>alpha</td><td>0.5</td></tr>
    </tbody>
    </table>
    <p>a &lt; b</p>
    """
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = [
        "<tr>" + "".join(f"<td>{html.escape(format_value(v))}</td>" for v in row) + "</tr>"
        for row in rows
    ]
    lines = ['<table class="rlscale-table">', f"<caption>{html.escape(title)}</caption>",
             f"<thead><tr>{head}</tr></thead>", "<tbody>", *body, "</tbody>", "</table>"]
    lines += [f"<p>{html.escape(n)}</p>" for n in notes if n]
    return "\n".join(lines)


def latex_math(expr: Any) -> str:
    """``$...$`` around sympy's LaTeX of ``expr`` (what Jupyter renders as math).

    Examples
    --------
    >>> import sympy as sp
    >>> latex_math(sp.Symbol("N") ** -sp.Rational(1, 2))
    '$\\\\frac{1}{\\\\sqrt{N}}$'
    """
    import sympy as sp

    return f"${sp.latex(expr)}$"


def data_frame(records: Sequence[Mapping[str, Any]], index: str | None = None) -> Any:
    """A :class:`pandas.DataFrame` of ``records`` (one mapping per row).

    Parameters
    ----------
    records : sequence of mappings
        Rows; the keys of the first row give the column order.
    index : str, optional
        Column to use as the index.

    Raises
    ------
    ImportError
        When pandas is not installed; the message names the extra ``pandas``.

    Examples
    --------
    >>> frame = data_frame([{"axis": "E", "value": 2.0}], index="axis")
    >>> frame.loc["E", "value"]
    2.0
    """
    try:
        pd = importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError(
            "to_frame() needs pandas, which rlscale does not install by default: "
            "pip install 'rlscale[pandas]' (or pip install pandas)"
        ) from exc
    records = list(records)
    columns = list(records[0]) if records else None
    frame = pd.DataFrame.from_records(records, columns=columns)
    return frame.set_index(index) if index is not None else frame


def parameter_frame(params: Mapping[str, float],
                    intervals: Mapping[str, tuple[float, float]]) -> Any:
    """Fitted parameters as a DataFrame indexed by ``parameter``: ``value``, ``low``, ``high``.

    ``low``/``high`` are the interval's ends, NaN where a parameter has none.
    """
    nan = float("nan")
    return data_frame([{"parameter": name, "value": float(value),
                        "low": intervals.get(name, (nan, nan))[0],
                        "high": intervals.get(name, (nan, nan))[1]}
                       for name, value in params.items()], index="parameter")
