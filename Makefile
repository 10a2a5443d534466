# The two README commands: `make demo` (main job on embedded defaults) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
# pytest-xdist: the tests run in this many worker processes (`make test WORKERS=1` runs them in
# one); most tests wait on subprocesses (git, bubblewrap, Python), so two workers on two cores
# finish well before one (make test: 325 s against 478-543 s, at a higher load)
WORKERS ?= 2
XDIST := -n $(WORKERS) --dist worksteal

.PHONY: demo test test-heavy test-demo test-all bench venv benchmarks-md lint format

venv:
	scripts/bootstrap dev,llm,gym,ray,report,export

demo: venv
	$(VENV)/bin/evotree demo

test: venv lint
	$(PY) -m pytest -q $(XDIST) -m "not slow and not gpu and not heavy"

# ruff's lint rules (pyproject.toml [tool.ruff.lint]) and its formatter (`make format` applies
# it); part of `make test`
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: venv
	$(VENV)/bin/ruff format .

# tests of tens of seconds each, run apart (CI runs them after `make test`)
test-heavy: venv
	$(PY) -m pytest -q $(XDIST) -m "heavy and not slow and not gpu"

# the demo end to end (slow: about 3 minutes on 2 cores); CI runs it after `make test`
test-demo: venv
	$(PY) -m pytest -q -m slow tests/test_demo.py

test-all: venv
	$(PY) -m pytest -q

bench: venv
	$(PY) bench/bench_branch.py && $(PY) bench/bench_tree.py && $(PY) bench/bench_startup.py
	$(PY) bench/bench_compaction.py && $(PY) bench/bench_dead_groups.py && $(PY) bench/bench_recorder_overhead.py
	$(PY) bench/bench_bootstrap.py && $(PY) bench/bench_diagnose.py && $(PY) -P bench/bench_gym_judge.py && $(PY) bench/bench_math.py

# BENCHMARKS.md is generated from the summary records in bench/results/*.json
benchmarks-md:
	$(PY) bench/make_benchmarks.py
