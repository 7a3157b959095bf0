"""The chain of a run and what a user keeps: `run` passes a request through the stages (request -> load -> reason
-> map -> judge -> report), `replan` runs the stages after reason again on an edited plan, `batch` runs many
cases, `run_history` and `project_runs` read past runs back. Nothing below imports these modules."""
