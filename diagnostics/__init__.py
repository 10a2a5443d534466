"""The four diagnostic layers (score, signal, behavior, version), statistics and backtests.

Reads the evidence store; never writes evidence.
"""
