"""Aggregates over scored trajectories: metrics, tables, dead ends, the trajectory table and
the simulator."""
