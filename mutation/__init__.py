"""`make mutation`: mutation testing of the core with mutmut, one line per module."""
