"""``rlscale report`` when the recommendation falls back to the baseline (issue 29).

A law the data do not identify leaves :func:`rlscale.optimize.recommend` no plan to judge:
it falls back to the default baseline with its reason.  The report is still written, with
exit 0: section 5 states the fallback and what it delivers trained, the summary leads with
it, results.json's ``efficiency`` section has the fallback's own shape, and the figures of
a plan are not drawn.  The run is the quick report less its independent sections; the
fission copies' fitter is made to refuse (as it does for a law a copy cannot identify),
so the fallback is recommend's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields

import pytest

#: The quick report less the sections the efficiency step does not read (cheaper).
CONFIG = """\
[reward_law_trainer]
enabled = false
[inference]
enabled = false
[proofs]
enabled = false
[next_runs]
enabled = false
"""

#: ``rlscale report`` in a fresh interpreter, with recommend's copy fits refused.
SCRIPT = """\
import sys
import rlscale.optimize._decision as decision

def not_identified(*args, **kwargs):
    raise ValueError("the exponent of k is not identified by this copy")

decision._fit = not_identified
from rlscale.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def fallback_report(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("fallback")
    (root / "config.toml").write_text(CONFIG)
    out = root / "out"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, "report", "--quick", "--no-progress", "--config",
         str(root / "config.toml"), "--out", str(out)],
        capture_output=True, text=True, timeout=900)
    return proc, out


def test_a_fallback_report_is_written_and_says_so(fallback_report) -> None:
    proc, out = fallback_report
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"report written to {out}/index.html")
    reason = ("use the baseline (proportional): the law could not be fitted to a fission "
              "copy of the data (the exponent of k is not identified by this copy)")
    assert lines[1] == f"recommendation: {reason}"
    assert lines[2].startswith("trained at the budget, proportional (cost ")
    assert lines[3].startswith("trained at the budget, k only (cost ")
    assert lines[4].startswith("proportional minus k only: ")
    assert lines[4].endswith("no plan was judged or trained (section 5 says why)")
    assert len(lines) == 5

    res = json.loads((out / "results.json").read_text())
    eff = res["efficiency"]
    assert eff["schema"] == "efficiency-fallback/1"
    assert eff["recommendation"]["status"] == "fallback"
    assert eff["recommendation"]["reason"] == reason
    assert eff["candidate"] == {"values": None, "comparisons": {}}
    assert eff["strongest"] is None  # not judged: no bootstrap laws to name it by
    assert "comparisons" not in eff and "realised" not in eff
    from rlscale.report._outcomes_efficiency import EfficiencyOutcome

    assert set(eff["omitted"]) == {f.name for f in fields(EfficiencyOutcome)} - set(eff)
    dep = eff["deployed"]
    assert (dep["recommended"], dep["versus"]) == ("proportional", "k only")
    assert dep["budget"] == res["allocation"]["budget"]
    assert dep["seeds"] == res["config"]["efficiency"]["seeds"]
    # What was trained is in the baselines' results file, one row per seed and arm, each
    # arm inside the budget; the section holds the same costs.
    from rlscale.sweep._run import read_results

    rows = read_results(out / "efficiency-baseline.csv")
    for name, tb in dep["baselines"].items():
        arm = tb["arm"]
        mine = [r for r in rows if (r["environments"], r["tasks_per_environment"],
                                    r["trajectories_per_task"]) == (arm["E"], arm["t"],
                                                                    arm["k"])]
        assert sorted(r["seed"] for r in mine) == dep["seeds"], name
        assert {r["cost"] for r in mine} == {arm["cost"]}
        assert arm["cost"] <= dep["budget"] * (1 + 1e-9)
        s, got = tb["success"], [r["success"] for r in mine]
        assert min(got) <= s["estimate"] <= max(got)  # an IQM of these runs
        assert 0.0 <= s["low"] <= s["estimate"] <= s["high"] <= 1.0
    d, p, k = (dep["difference"], dep["baselines"]["proportional"]["success"],
               dep["baselines"]["k only"]["success"])
    assert d["estimate"] == pytest.approx(p["estimate"] - k["estimate"])
    assert f"{d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]" in lines[4]

    md = (out / "index.md").read_text()
    summary = md.split("Summary of findings", 1)[1].split("\n#", 1)[0]
    assert f"(1) Recommendation: {reason}. No plan could be judged" in summary
    assert "η" not in summary.split("(2)", 1)[0]  # no plan's η stated for a fallback
    section = md.split("5. The recommendation and what it delivers", 1)[1].split("\n#", 1)[0]
    assert "the recommendation falls back to the default baseline" in section
    assert f"Recommendation: {reason}." in section
    # k only stops at its bound (k ≤ 128) and spends less of the budget: said, not hidden.
    ks = dep["baselines"]["k only"]["arm"]
    assert ks["k"] == 128 and ks["cost"] < 0.95 * dep["budget"]
    assert "what the budget buys each, not equal cost" in section
    assert f"{p['estimate']:.3f} [{p['low']:.3f}, {p['high']:.3f}]" in section
    assert "Figures not drawn: " in section and "efficiency.omitted" in section
    assert "efficiency.png" not in md and "realised.png" not in md
    assert not (out / "efficiency.png").exists() and not (out / "realised.png").exists()
    assert (out / "fits.png").is_file() and (out / "allocation.png").is_file()
    caveats = md.split("\n# Caveats", 1)[-1] if "\n# Caveats" in md else md
    assert "The recommendation fell back to the default baseline" in caveats
    assert "data:image/png;base64," in (out / "index.html").read_text()
