"""Tools for teaching and testing crash recovery: deterministic faults, cassette replay, offline runs."""
