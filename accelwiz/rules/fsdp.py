"""Rules registered here: see accelwiz/rules/catalog.py."""
