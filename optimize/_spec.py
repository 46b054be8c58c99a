"""The TOML schema of ``rlscale allocate spec.toml``.

A spec names a law, a cost, optional bounds, synthetic-data methods and a
baseline for the efficiency curve (``examples/allocate.toml`` is a commented
example)::

    [law]                       # required
    family = "additive"         # additive | multiplicative | pass_rate | variance_components
    floor = 0.2                 # additive, multiplicative, variance_components
    coefficients = { environments = 3.0, trajectories = 4.0 }   # additive, pass_rate
    exponents = { environments = 0.45, trajectories = 0.2 }   # all but variance_components
    # coefficient = 2.0         # multiplicative
    # p_max = 0.9               # pass_rate
    # sigma2_env = 4.0, sigma2_task = 1.0, sigma2_traj = 0.25, axes = ["E", "t", "k"]

    [cost]                      # required
    expression = "100*environments + trajectories"   # a posynomial (see parse_posynomial)
    substitute = { tasks = "E*t" }                    # optional: law axis -> monomial

    [bounds]                    # optional, per decision variable
    environments = { min = 1, max = 500 }

    [[synthesis]]               # optional, repeatable
    axis = "environments"
    unit_cost = 30.0
    rho = 0.6
    saturation = 2000.0         # optional; with kind = "saturating" (default) or "relative"
    kind = "saturating"         # linear | saturating | relative
    name = "llm_envs"           # optional decision-variable name

    [baseline]                  # optional: efficiency against scaling one axis
    scaled = "trajectories"
    fixed = { environments = 50 }

Unknown keys are errors that name the key and the table, so typos do not
pass silently.  No value is evaluated: numbers must be TOML numbers and the
cost goes through the whitelisting parser.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlscale.optimize._allocate import AllocationProblem
from rlscale.theory._laws import Law, law_from_dict
from rlscale.theory._synthetic import SynthesisMethod

__all__ = ["AllocationSpec", "load_spec"]

_TABLES = {"law", "cost", "bounds", "synthesis", "baseline"}
#: The keys each law family takes, with their TOML types: "number", "table" (of
#: numbers), "string", "strings" (an array of strings).
_LAW_SCHEMA: dict[str, dict[str, str]] = {
    "additive": {"floor": "number", "coefficients": "table", "exponents": "table"},
    "multiplicative": {"coefficient": "number", "exponents": "table", "floor": "number"},
    "pass_rate": {"p_max": "number", "coefficients": "table", "exponents": "table"},
    "variance_components": {"floor": "number", "sigma2_env": "number",
                            "sigma2_task": "number", "sigma2_traj": "number",
                            "axes": "strings"},
}
_LAW_KEYS = {"family"} | {k for keys in _LAW_SCHEMA.values() for k in keys}
_SYN_SCHEMA = {"axis": "string", "unit_cost": "number", "rho": "number",
               "saturation": "number", "kind": "string", "name": "string"}
_SYN_KEYS = set(_SYN_SCHEMA)
_EXPECTED = {"number": "a number", "table": "a table of numbers such as { E = 0.3 }",
             "string": "a string", "strings": "an array of strings",
             "strtable": "a table of strings such as { tasks = \"E*t\" }"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_type(where: str, value: Any, kind: str) -> None:
    """Refuse a value of the wrong TOML type, naming the key and the type expected."""
    ok = {
        "number": _is_number(value),
        "table": isinstance(value, Mapping) and all(_is_number(v) for v in value.values()),
        "string": isinstance(value, str),
        "strings": isinstance(value, list) and all(isinstance(v, str) for v in value),
        "strtable": isinstance(value, Mapping) and all(isinstance(v, str)
                                                       for v in value.values()),
    }[kind]
    if not ok:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise TypeError(f"{where} must be {_EXPECTED[kind]}; got {type(value).__name__} "
                        f"{shown}")


def _law(tab: Mapping[str, Any]) -> Law:
    """The [law] table, checked key by key against its family's schema."""
    family = tab.get("family")
    if not isinstance(family, str) or family not in _LAW_SCHEMA:
        raise ValueError(f"[law] family must be one of {sorted(_LAW_SCHEMA)}; got "
                         f"family={family!r}")
    schema = _LAW_SCHEMA[family]
    bad = sorted(set(tab) - set(schema) - {"family"})
    if bad:
        why = "is not a parameter of" if bad[0] in _LAW_KEYS else "is unknown for"
        raise ValueError(f"[law] key {bad[0]!r} {why} the {family} law; its keys: "
                         f"{sorted(schema)}")
    for key, value in tab.items():
        if key != "family":
            _check_type(f"[law] {key}", value, schema[key])
    if "axes" in tab:  # only the variance-components schema names axes (checked above)
        from rlscale.theory._nested import VarianceComponentsLaw

        kwargs = {k: v for k, v in tab.items() if k != "family"}
        try:
            return VarianceComponentsLaw(**kwargs)
        except TypeError as exc:
            raise TypeError(f"bad parameters for the {family} law: {exc}") from exc
    return law_from_dict(tab)


@dataclass(frozen=True)
class AllocationSpec:
    """A parsed spec: everything :class:`AllocationProblem` needs, plus a baseline."""

    law: Law
    cost: str
    bounds: dict[str, Any] = field(default_factory=dict)
    substitute: dict[str, str] = field(default_factory=dict)
    synthesis: tuple[SynthesisMethod, ...] = ()
    baseline: dict[str, Any] | None = None
    source: str = ""

    def problem(self) -> AllocationProblem:
        """The compiled-once allocation problem of this spec."""
        return AllocationProblem(self.law, self.cost, self.bounds or None,
                                 self.substitute or None, self.synthesis or None)

    def as_dict(self) -> dict[str, Any]:
        return {"law": self.law.as_dict(), "cost": self.cost, "bounds": self.bounds,
                "substitute": self.substitute,
                "synthesis": [m.as_dict() for m in self.synthesis],
                "baseline": self.baseline, "source": self.source}


def _unknown(table: str, got: Mapping[str, Any], allowed: set[str]) -> None:
    bad = sorted(set(got) - allowed)
    if bad:
        raise ValueError(f"unknown key {bad[0]!r} in [{table}]; allowed: {sorted(allowed)}")


def load_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> AllocationSpec:
    """Read and validate an allocation spec from a TOML file, TOML text or a dict.

    Examples
    --------
    >>> spec = load_spec('''
    ... [law]
    ... family = "additive"
    ... floor = 0.2
    ... coefficients = { E = 3.0, K = 4.0 }
    ... exponents = { E = 0.45, K = 0.2 }
    ... [cost]
    ... expression = "100*E + K"
    ... [bounds]
    ... E = { max = 500 }
    ... ''')
    >>> spec.law.axes, spec.bounds
    (('E', 'K'), {'E': {'max': 500}})
    >>> load_spec('[law]\\nfamily = "additive"\\nfloor = 0.2\\n[costs]\\nexpression = "E"')
    Traceback (most recent call last):
    ...
    ValueError: unknown table [costs] in the spec; allowed: ['baseline', 'bounds', 'cost', \
'law', 'synthesis']
    """
    source = ""
    if not isinstance(spec, Mapping | str | os.PathLike):
        raise TypeError(f"spec must be a TOML file path, TOML text or a mapping; got "
                        f"spec={spec!r:.60}")
    if isinstance(spec, Mapping):
        data = dict(spec)
    else:
        text = None
        if isinstance(spec, str) and ("\n" in spec or "[" in spec):
            text = spec
        else:
            source = os.fspath(spec)
            with open(source, "rb") as fh:
                try:
                    data = tomllib.load(fh)
                except tomllib.TOMLDecodeError as exc:
                    raise ValueError(f"{source}: invalid TOML: {exc}") from exc
        if text is not None:
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"invalid TOML: {exc}") from exc
    bad = sorted(set(data) - _TABLES)
    if bad:
        raise ValueError(f"unknown table [{bad[0]}] in the spec; allowed: {sorted(_TABLES)}")
    for required in ("law", "cost"):
        if required not in data or not isinstance(data[required], Mapping):
            raise ValueError(f"the spec needs a [{required}] table")
    law = _law(data["law"])
    cost_tab = data["cost"]
    _unknown("cost", cost_tab, {"expression", "substitute"})
    if not isinstance(cost_tab.get("expression"), str):
        raise ValueError("[cost] needs expression = \"...\" (a string such as \"6*N*D\")")
    _check_type("[cost] substitute", cost_tab.get("substitute", {}), "strtable")
    substitute = dict(cost_tab.get("substitute", {}))
    if not isinstance(data.get("bounds", {}), Mapping):
        raise TypeError(f"[bounds] must be a table of {{ min = ..., max = ... }} per variable; "
                        f"got {data['bounds']!r:.60}")
    bounds = dict(data.get("bounds", {}))
    for k, v in bounds.items():
        if not isinstance(v, Mapping):
            raise TypeError(f"[bounds] {k} must be a table such as {{ min = 1, max = 500 }}; "
                            f"got {v!r}")
        _unknown(f"bounds.{k}", v, {"min", "max"})
        for side, x in v.items():
            _check_type(f"[bounds] {k}.{side}", x, "number")
    synthesis = []
    syn = data.get("synthesis", [])
    if isinstance(syn, Mapping):
        syn = [syn]
    if not isinstance(syn, list):
        raise TypeError(f"[[synthesis]] must be an array of tables; got {syn!r:.60}")
    for i, entry in enumerate(syn):
        if not isinstance(entry, Mapping):
            raise TypeError(f"[[synthesis]] entry {i} must be a table")
        _unknown(f"synthesis #{i}", entry, _SYN_KEYS)
        missing = [k for k in ("axis", "unit_cost", "rho") if k not in entry]
        if missing:
            raise ValueError(f"[[synthesis]] entry {i} needs {missing}")
        for key, value in entry.items():
            _check_type(f"[[synthesis]] entry {i} {key}", value, _SYN_SCHEMA[key])
        synthesis.append(SynthesisMethod(**entry))
    baseline = data.get("baseline")
    if baseline is not None:
        if not isinstance(baseline, Mapping):
            raise TypeError("[baseline] must be a table with scaled and fixed")
        _unknown("baseline", baseline, {"scaled", "fixed"})
        if "scaled" not in baseline:
            raise ValueError("[baseline] needs scaled = \"<axis>\"")
        _check_type("[baseline] scaled", baseline["scaled"], "string")
        _check_type("[baseline] fixed", baseline.get("fixed", {}), "table")
        baseline = {"scaled": baseline["scaled"], "fixed": dict(baseline.get("fixed", {}))}
    out = AllocationSpec(law, cost_tab["expression"], bounds, substitute, tuple(synthesis),
                         baseline, source)
    out.problem()  # validate the combination now, with the spec's own messages
    return out
