"""Checks that a CompileError points at the line of a test file marked `# E:<tag>`."""
from __future__ import annotations

from typing import Callable

from cubepy import CompileError


def marker_line(path: str, tag: str) -> int:
    """The line of `path` ending with `# E:<tag>`."""
    with open(path) as fh:
        for i, text in enumerate(fh, 1):
            if text.rstrip().endswith(f"# E:{tag}"):
                return i
    raise AssertionError(f"no line of {path} ends with # E:{tag}")


def located_error_checker(path: str) -> Callable[..., None]:
    """`error_at(err, tag, *words)` for the test file `path`: the error is at the line
    marked `# E:<tag>` of that file, shows a caret, and its message holds every word."""
    def error_at(err: CompileError, tag: str, *words: str) -> None:
        assert err.lineno == marker_line(path, tag), str(err)
        assert err.filename == path
        assert "^" in str(err).splitlines()[-1]
        for w in words:
            assert w in err.msg, err.msg
    return error_at
