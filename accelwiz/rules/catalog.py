"""Imports every module that registers rules. Add new rule modules here."""

from accelwiz.rules import schema_rules  # noqa: F401  AW0xx
