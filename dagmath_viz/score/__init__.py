"""Scoring one trajectory: structural validation, the step graph, the reference scorer and
its fast twin."""
