"""The map stage: the favourability surface of the chosen evidence and the targets drawn from it."""
