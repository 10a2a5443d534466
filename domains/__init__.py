"""Workspace templates and judges: ``math`` (TRL GRPO), ``gym`` (EvoPolicyGym protocol), custom.

Domains use the harness SDK; they never reach into gates.
"""
