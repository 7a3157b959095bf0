"""What a user runs and keeps, above the engine: case folders, requests built from a user's inputs, batch runs,
the choices offered for a run and the history of past runs in a project. These modules import the engine; the
engine and the modules at plugin/'s top level never import them."""
