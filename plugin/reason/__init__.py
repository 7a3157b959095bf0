"""The reason stage: the STA-CoT loop (planner, executor, verifier), its contract with the back-ends, the workspace
it reasons over, the knowledge base, and the evidence the map stage is handed."""
