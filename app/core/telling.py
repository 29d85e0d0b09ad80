"""The one rule for quoting a failing command's output: its most telling line.

A gate's last line is usually the least useful one (`make: *** [Makefile:4:
test] Error 2`, `npm ERR! A complete log of this run can be found in: ...`,
`error: could not compile ...`). People read up to the line that names the
failure: pytest's `FAILED tests/x.py::test_y - assert 1 == 2`, cargo's
`error[E0308]: mismatched types`, jest's `● suite › test`. So the telling line
is the last line that names a failure, the wrappers' epilogues and count-only
summaries skipped; failing that, the last other non-empty line. Titles, status
comments, check texts and a gate failure's reason all quote it from here. Pure.
"""

from __future__ import annotations

import re

# A line that names a failure (pytest, unittest, cargo, rustc, npm, jest, go, gcc, tsc...).
_FAILURE = re.compile(
    r"(^|[\s\[(])(FAILED|FAIL|ERROR|Error|error(\[E\d+\])?:|AssertionError|assert"
    r"|Traceback|panicked at|Exception|failed|✕|●)"
    r"|error TS\d+:"
)
# What a wrapper prints after the real failure, and summaries that only count.
_EPILOGUE = re.compile(
    "|".join(
        (
            r"^make(\[\d+\])?: (\*\*\*|.*Error \d+)",  # make: *** [Makefile:4: test] Error 2
            r"^npm (ERR!|error)\s*$",
            r"^npm (ERR!|error) (code|path|command|errno|signal|A complete log|Lifecycle"
            r"|Error: command failed|Failed at|This is probably|To see a list|\s+(npm run|in ))",
            r"^error: (could not compile|test failed, to rerun)",  # cargo's trailers
            r"^For more information about this error",
            r"^=+ .*\b(failed|passed|error|errors)\b.* in [\d.]+s",  # pytest's count line
            r"^=+ (short test summary info|FAILURES|ERRORS) =+$",
            r"^test result: FAILED",  # cargo test's count line
            r"^(Tests|Test Suites|Snapshots):\s",  # jest's count lines
            r"^FAILED \((failures|errors)=\d+",  # unittest's count line
            r"^FAIL\s*$|^exit status \d+$|^FAIL\s+\S+\s+[\d.]+s$",  # go test's trailers
            r"^Error: Process completed with exit code",
        )
    )
)


def telling_line(output: str) -> str:
    """The last line of `output` that names a failure (epilogues skipped), else
    its last non-empty line that is no epilogue, else its last line; stripped."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    plain = [line for line in lines if not _EPILOGUE.search(line)]
    for line in reversed(plain):
        if _FAILURE.search(line):
            return line
    return (plain or lines or [""])[-1]
