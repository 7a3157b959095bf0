"""The load stage: the layers read and prepared before any reasoning (index layers computed from scenes, the check
of the loaded layers against the deposit models)."""
