"""Allow ``python -m rlscale``."""

import sys

try:
    from rlscale.cli import main
except KeyboardInterrupt:
    # Ctrl-C while the CLI's modules load (the first ~0.1 s, before main() can catch it)
    # printed a dozen lines of importlib traceback (issue 22: 3 of 20 SIGINTs of a sweep).
    sys.stderr.write("rlscale: interrupted\n")
    raise SystemExit(130) from None

if __name__ == "__main__":
    raise SystemExit(main())
