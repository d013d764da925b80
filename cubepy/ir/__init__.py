"""The cubepy IR: types, nodes, printer/parser, verifier and passes."""
