"""Pydantic models of the two config files. They describe shape only (keys, types, allowed values);
semantics live in accelwiz.rules."""
