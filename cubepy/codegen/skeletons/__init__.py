"""The kernel skeletons of codegen/templates/, compiled by jinja2 into Python modules
(one per template, `<stem>_j2.py`), so that a process need not compile them: see
cubepy/codegen/skeleton.py. Written by `python -m cubepy.codegen.skeleton`."""
