"""Benchmarks that print figures; run them all with `make bench`."""
