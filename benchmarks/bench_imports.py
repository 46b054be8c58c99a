"""Import time of rlscale's packages against importing numpy alone (fresh interpreters)."""

from __future__ import annotations

import subprocess
import sys

from benchmarks._harness import Case


def _importer(statement: str):
    def run() -> None:
        subprocess.run([sys.executable, "-c", statement], check=True)

    return run


def cases(smoke: bool) -> list[Case]:
    numpy = _importer("import numpy")
    return [
        Case("import rlscale", _importer("import rlscale"), numpy, "import numpy"),
        Case("import rlscale.theory", _importer("import rlscale.theory"), numpy, "import numpy"),
        Case("import rlscale.optimize", _importer("import rlscale.optimize"), numpy,
             "import numpy"),
        Case("import cvxpy (for scale)", _importer("import cvxpy"), numpy, "import numpy"),
    ]
