"""``python -m dagmath_viz`` runs the ``dagmath`` command."""

from dagmath_viz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
