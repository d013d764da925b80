"""cubepy.pipeline as a type checker sees it: the calls are Intrinsic objects at run time
(cubepy/pipeline.py); here they have signatures."""
from typing import Any, SupportsIndex

from .lang import Intrinsic

PIPELINE_INTRINSICS: dict[str, Intrinsic]
__all__: list[str]


def memcpy_async(dst: Any, dst_index: Any, src: Any, src_index: Any, /) -> None: ...
def commit() -> None: ...
def wait(pending: SupportsIndex, /) -> None: ...
