"""The reserved names of each target live in cubepy/targets/reserved.py (they are a fact
of the target, read by its Target record); this module keeps the code generators'
imports working."""
from ..targets.reserved import *  # noqa: F401,F403
from ..targets.reserved import (BY_TARGET, COMMON, GENERATED, MACRO_PREFIX,  # noqa: F401
                                WGSL_HELPER_LOCALS, reserved)
