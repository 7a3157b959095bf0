"""The judge stage: the targets' table, the evidence each target is judged on, and its verdict."""
