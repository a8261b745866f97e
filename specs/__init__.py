"""The example specs, shipped in the wheel as ``vlagen.examples``: ``vlagen init --example
NAME`` writes one (``vlagen init --example list`` lists them)."""
