"""The `odw` command line."""
