"""A registry of named, property-based checks of rlscale's claims.

Each capability registers properties in a module of this package (one module
per area, e.g. ``reward_law.py``).  A property is a *factory* returning a
hypothesis test (a function decorated with :func:`hypothesis.given` that takes
no other arguments).  The same registry runs in three places: the test suite
(``tests/test_properties.py``), the CLI (``rlscale verify properties``) and any
Python session, so users can re-check the installed toolkit.

Hypothesis is needed only when properties run (extra ``verify``); importing
this module does not import it.

Examples
--------
>>> from rlscale.properties import PROFILES
>>> sorted(PROFILES)
['ci', 'deep', 'dev']
>>> PROFILES["ci"]["max_examples"]
200
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rlscale.theory._result import Result

__all__ = [
    "PROFILES",
    "Property",
    "PropertyResult",
    "register",
    "register_profiles",
    "registry",
    "run_properties",
    "run_property",
    "select",
]

#: Hypothesis settings per profile: ``ci`` is derandomised so CI is repeatable.
PROFILES: dict[str, dict[str, Any]] = {
    "ci": {"derandomize": True, "max_examples": 200, "deadline": None},
    "dev": {"max_examples": 25, "deadline": None},
    "deep": {"max_examples": 5000, "deadline": None},
}


@dataclass(frozen=True)
class Property:
    """A named claim checked by hypothesis.

    Attributes
    ----------
    name : str
        Registry key, ``area.claim`` (e.g. ``"reward_law.gain_monotone"``).
    description : str
        One sentence stating the claim.
    factory : callable
        Returns the hypothesis test; called each run so no state is shared.
    """

    name: str
    description: str
    factory: Callable[[], Callable[[], None]]

    def __post_init__(self) -> None:
        for field_name in ("name", "description"):  # issue 22: a TypeError naming it
            if not isinstance(getattr(self, field_name), str) or not getattr(self, field_name):
                raise TypeError(f"{field_name} must be a non-empty string; got "
                                f"{getattr(self, field_name)!r:.60}")
        if not callable(self.factory):
            raise TypeError(f"factory must be callable; got {self.factory!r:.60}")


@dataclass(frozen=True)
class PropertyResult(Result):
    """Outcome of running one property."""

    name: str
    description: str
    passed: bool
    examples: int
    seconds: float
    falsifying: str | None = None
    error: str | None = None

    @property
    def success(self) -> bool:
        """``passed`` (the result convention every rlscale result follows)."""
        return bool(self.passed)

    @property
    def status(self) -> str:
        """``"passed"``, ``"falsified"`` or ``"error"``."""
        return "passed" if self.passed else ("error" if self.error else "falsified")

    @property
    def message(self) -> str:
        """The verdict in words, with the falsifying example or the error."""
        why = self.error or self.falsifying
        return (f"{self.name}: {self.status} after {self.examples} examples"
                + (f": {why}" if why and not self.passed else ""))


_REGISTRY: dict[str, Property] = {}


def register(name: str, description: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Decorator registering a property factory under ``name``.

    Use it at the top level of an area module of this package (see
    ``rlscale/properties/validation.py``); :func:`registry` imports those.

    Examples
    --------
    >>> _ = registry()  # imports the area modules, registering their properties
    >>> register("validation.check_real_roundtrip", "dup")(lambda: None)
    Traceback (most recent call last):
    ...
    ValueError: property name 'validation.check_real_roundtrip' is registered twice
    """

    Property(name, description, lambda: None)  # a TypeError naming a bad name (issue 22)

    def decorator(factory: Callable[[], Any]) -> Callable[[], Any]:
        if name in _REGISTRY and _REGISTRY[name].factory is not factory:
            raise ValueError(f"property name {name!r} is registered twice")
        _REGISTRY[name] = Property(name, description, factory)
        return factory

    return decorator


def _need_hypothesis() -> None:
    """The registry and its runs need hypothesis (extra ``verify``): say so, not a bare
    ``No module named 'hypothesis'`` (issue 24)."""
    from rlscale._optional import require

    require("hypothesis", extra="verify", purpose="the property registry and its checks")


def registry() -> dict[str, Property]:
    """All registered properties, by name (imports every area module once).

    Examples
    --------
    >>> prop = registry()["validation.check_real_roundtrip"]
    >>> prop.name.split(".")[0]
    'validation'
    """
    _need_hypothesis()  # the area modules build their strategies at import
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(_REGISTRY.items()))


def register_profiles() -> None:
    """Register :data:`PROFILES` with hypothesis (idempotent).

    Examples
    --------
    >>> from hypothesis import settings
    >>> register_profiles()
    >>> settings.get_profile("ci").max_examples
    200
    """
    _need_hypothesis()
    from hypothesis import settings

    for name, kwargs in PROFILES.items():
        settings.register_profile(name, **kwargs)


def select(names: Iterable[str] | None) -> list[Property]:
    """Properties named by ``names`` (a name or an area prefix each); all if empty.

    Examples
    --------
    >>> [p.name for p in select(["validation"])]
    ['validation.check_real_roundtrip']
    >>> select(["no_such_area"])
    Traceback (most recent call last):
    ...
    ValueError: unknown property 'no_such_area' in names; choose from ...
    """
    props = registry()
    if names is not None and (isinstance(names, str | bytes) or not isinstance(names, Iterable)):
        raise TypeError(f"names must be an iterable of property names or None; got "
                        f"{names!r:.60}")
    names = None if names is None else list(names)
    if names and not all(isinstance(n, str) for n in names):
        raise TypeError(f"names must hold property names (str); got {names!r:.60}")
    if not names:
        return list(props.values())
    chosen: list[Property] = []
    for pattern in names:
        # A bare area name ("reward_law") selects all of that area's properties.
        hits = [p for key, p in props.items() if key == pattern or key.startswith(pattern + ".")]
        if not hits:
            raise ValueError(
                f"unknown property {pattern!r} in names; choose from "
                f"{', '.join(props) or 'none'}"
            )
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def run_property(prop: Property | str, profile: str = "ci") -> PropertyResult:
    """Run one property under a hypothesis profile and report the outcome.

    A falsified property is a result (``passed=False`` with the falsifying
    example), not an exception.

    Examples
    --------
    >>> result = run_property("validation.check_real_roundtrip", "dev")
    >>> result.passed, result.examples > 0
    (True, True)
    """
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"profile={profile!r} is not one of {sorted(PROFILES)}")
    _need_hypothesis()
    from hypothesis import settings
    from hypothesis.reporting import with_reporter

    if isinstance(prop, str):
        prop = select([prop])[0]
    if not isinstance(prop, Property):
        raise TypeError(f"prop must be a Property or a property name; got {prop!r:.60}")
    test = prop.factory()
    if not hasattr(test, "hypothesis"):
        raise TypeError(f"property {prop.name!r}: its factory must return a hypothesis "
                        f"@given test; got {test!r:.80}")
    count = 0
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        return inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]
    test = settings(**PROFILES[profile])(test)
    report: list[str] = []
    start = time.perf_counter()
    try:
        with with_reporter(lambda value: report.append(str(value))):
            test()
    except Exception as exc:  # a falsified property is a result, not a crash
        # Hypothesis attaches the falsifying example as an exception note
        # (PEP 678); older versions report it through the reporter instead.
        lines = [*report, *getattr(exc, "__notes__", [])]
        falsifying = "\n".join(line for line in lines if line.strip()) or None
        return PropertyResult(
            prop.name, prop.description, False, count, time.perf_counter() - start,
            falsifying=falsifying, error=f"{type(exc).__name__}: {exc}",
        )
    return PropertyResult(prop.name, prop.description, True, count, time.perf_counter() - start)


def run_properties(
    names: Iterable[str] | None = None, profile: str = "ci"
) -> list[PropertyResult]:
    """Run the selected properties (all by default) under ``profile``.

    Examples
    --------
    >>> [r.passed for r in run_properties(["validation"], "dev")]
    [True]
    """
    if not isinstance(profile, str) or profile not in PROFILES:  # before any property runs
        raise ValueError(f"profile={profile!r:.60} is not one of {sorted(PROFILES)}")
    return [run_property(p, profile) for p in select(names)]
