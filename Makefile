# Lodestar developer commands. `make demo` and `make test` are the two set-up commands.
PY := .venv/bin/python
export QT_QPA_PLATFORM := offscreen

.PHONY: setup test lint demo bench package sample clean

setup:
	@scripts/setup.sh

lint: setup
	$(PY) -m ruff check .
	@scripts/typecheck.sh

test: setup lint
	$(PY) -m pytest -q -n 2 tests

demo: setup
	@scripts/demo.sh

bench: setup
	$(PY) tests/benchmarks/run_all.py

.PHONY: bench-heldout
bench-heldout: setup
	$(PY) tests/benchmarks/heldout_worlds_b.py

.PHONY: test-llm
test-llm: setup
	@scripts/test_llm.sh

sample: setup
	$(PY) scripts/make_sample_case.py

package:
	@/usr/bin/python3 scripts/package.py

clean:
	rm -rf build dist .pytest_cache

.PHONY: screenshots
screenshots: setup
	$(PY) scripts/screenshots.py
