"""The kernel skeletons of codegen/templates/, translated into plain Python modules (one
per template, `<stem>_j2.py`, each with a `render(context)`), so that a process renders
them without importing jinja2: see cubepy/codegen/skeleton.py. Written by
`python -m cubepy.codegen.skeleton`."""
