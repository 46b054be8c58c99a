"""
A machine-checked bound
=======================

:func:`rlscale.proofs.check_proof` checks the derivation that the expected maximum of n iid
standard normals obeys e(n) ≤ √(2 ln n) — Jensen plus the Gaussian moment generating function,
the free parameter optimised symbolically and the minimum certified by z3. The figure draws the
bound the proof guarantees next to :func:`rlscale.theory.expected_max_normal` and the lower bound
√(ln n/(π ln 2)) that ``rlscale prove emax-lower`` certifies.
"""

import matplotlib.pyplot as plt
import numpy as np

from rlscale.proofs import check_proof
from rlscale.theory import expected_max_normal

result = check_proof("emax-upper")
print("passed:", result.passed)
for step in result.steps:
    print(step.mark, step.name, "—", step.claim)

n = np.geomspace(2, 1e12, 200)
fig, ax = plt.subplots(figsize=(5.5, 4))
ax.plot(n, expected_max_normal(n), label="e(n) = E[max of n N(0, 1)]")
ax.plot(n, np.sqrt(2 * np.log(n)), ls="--", label="√(2 ln n)  (emax-upper)")
ax.plot(n, np.sqrt(np.log(n) / (np.pi * np.log(2))), ls=":",
        label="√(ln n / (π ln 2))  (emax-lower)")
ax.set(xscale="log", xlabel="n", ylabel="expected maximum")
ax.legend()
fig.tight_layout()
plt.show()
