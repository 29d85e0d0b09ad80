"""The engine: one driver loop that runs the pure core through ports.

`odw simulate` drives it with scripted ports; local mode and the service drive
the same loop with real ones (subprocess stages, git integration, SQL log).
"""
