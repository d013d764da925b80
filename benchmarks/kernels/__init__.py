"""Real kernels written in cubepy, each with a `run(client, ...)` host function, a numpy
`reference` and an `example(client)` that checks a small case (tests/test_kernels_gallery.py
runs them on every runtime; `python -m benchmarks` times them against their peers)."""
