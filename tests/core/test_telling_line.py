"""The telling line of real-looking gate outputs: the line a person reads for
the failure, not the wrapper's last word (`app/core/telling.py`)."""

from __future__ import annotations

import pytest

from app.core.telling import telling_line

PYTEST = """\
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/runner/work/app/app
collected 12 items

tests/test_budget.py ....F.......                                        [100%]

=================================== FAILURES ===================================
_____________________________ test_charge_repeats ______________________________

    def test_charge_repeats():
>       assert charge(1) == 2
E       assert 1 == 2
E        +  where 1 = charge(1)

tests/test_budget.py:14: AssertionError
=========================== short test summary info ============================
FAILED tests/test_budget.py::test_charge_repeats - assert 1 == 2
========================= 1 failed, 11 passed in 0.12s =========================
"""

MAKE_PYTEST = PYTEST + "make: *** [Makefile:7: test] Error 1\n"

MAKE_MISSING = """\
cc -Wall -o build/odw src/odw.c
src/odw.c: In function 'main':
src/odw.c:4:5: error: 'x' undeclared (first use in this function)
    4 |     x = 1;
      |     ^
make: *** [Makefile:3: build/odw] Error 1
"""

CARGO_BUILD = """\
   Compiling odw v0.1.0 (/home/runner/work/odw)
error[E0308]: mismatched types
 --> src/lib.rs:4:5
  |
3 | pub fn budget() -> u32 {
  |                    --- expected `u32` because of return type
4 |     "two"
  |     ^^^^^ expected `u32`, found `&str`

For more information about this error, try `rustc --explain E0308`.
error: could not compile `odw` (lib) due to 1 previous error
"""

CARGO_TEST = """\
running 2 tests
test tests::adds ... ok
test tests::charges ... FAILED

failures:

---- tests::charges stdout ----
thread 'tests::charges' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::charges

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
"""

NPM_JEST = """\

> app@1.0.0 test
> jest

 FAIL  src/sum.test.js
  ● sum › adds 1 + 2 to equal 3

    expect(received).toBe(expected) // Object.is equality

    Expected: 3
    Received: 4

      3 | test('adds 1 + 2 to equal 3', () => {
    > 4 |   expect(sum(1, 2)).toBe(3);
        |                     ^

      at Object.toBe (src/sum.test.js:4:21)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
npm ERR! Lifecycle script `test` failed with error:
npm ERR! Error: command failed
npm ERR!   in workspace: app@1.0.0
npm ERR!   at location: /home/runner/work/app
"""

NPM_MISSING_SCRIPT = """\
npm ERR! Missing script: "test"
npm ERR!
npm ERR! To see a list of scripts, run:
npm ERR!   npm run

npm ERR! A complete log of this run can be found in: /root/.npm/_logs/2026-12-03-debug-0.log
"""


@pytest.mark.parametrize(
    ("output", "telling"),
    [
        (PYTEST, "FAILED tests/test_budget.py::test_charge_repeats - assert 1 == 2"),
        (MAKE_PYTEST, "FAILED tests/test_budget.py::test_charge_repeats - assert 1 == 2"),
        (MAKE_MISSING, "src/odw.c:4:5: error: 'x' undeclared (first use in this function)"),
        (CARGO_BUILD, "error[E0308]: mismatched types"),
        (CARGO_TEST, "assertion `left == right` failed"),
        (NPM_JEST, "● sum › adds 1 + 2 to equal 3"),
        (NPM_MISSING_SCRIPT, 'npm ERR! Missing script: "test"'),
        ("all good\nbut exit 1\n", "but exit 1"),
        ("", ""),
    ],
    ids=[
        "pytest",
        "make-around-pytest",
        "make-around-cc",
        "cargo-build",
        "cargo-test",
        "npm-jest",
        "npm-missing-script",
        "nothing-names-a-failure",
        "no-output",
    ],
)
def test_the_telling_line_is_the_last_that_names_the_failure(output: str, telling: str) -> None:
    assert telling_line(output) == telling


def test_an_output_of_epilogues_only_still_says_something() -> None:
    assert telling_line("make: *** [Makefile:3: test] Error 2\n") == (
        "make: *** [Makefile:3: test] Error 2"
    )
