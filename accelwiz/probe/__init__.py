"""The hardware probe and machine profiles."""
