"""Maintainers' commands: `/odw ...` comments and check-run buttons."""
