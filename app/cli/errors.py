"""Errors a user can cause, mapped to one clear line and an exit code."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix; printed as one line, no traceback."""

    exit_code = 1


class UsageError(UserError):
    """Invalid arguments, scenario or configuration: exit 2."""

    exit_code = 2
