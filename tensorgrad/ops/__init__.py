"""The ops: one Function subclass each, forward and backward side by side."""
