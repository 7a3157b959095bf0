"""The request stage: what a run is asked (an AnalysisRequest from the dock, a case folder, a Processing call or a
run record to replay) and the run record it leaves."""
