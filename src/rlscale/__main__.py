"""Allow ``python -m rlscale``."""

from rlscale.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
