"""CLI verbs, one module each (discovered by :mod:`rlscale.cli`).

A verb module defines ``register(subparsers)``, which adds its parser and sets
``func`` to a handler ``(args) -> int``.  Handlers import heavy libraries
lazily.  Only verbs that work are added here: no placeholders.
"""
