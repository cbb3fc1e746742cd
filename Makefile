# Entry points (README Quickstart): `make demo`, `make test`; `make docs` builds the documentation
# site; `make lock` refreshes the lock.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK   := requirements.lock
# the lock tool itself is pinned too; `make lock` installs it into its own venv
UV_VERSION := 0.13.9
LOCK_PYTHON := 3.10

.PHONY: demo test docs install lock clean

# The venv holds exactly the locked versions (hash-checked, no resolver, no build step
# that downloads anything); the project itself is installed editable without build
# isolation, from the locked setuptools. Then compilation moves out of the user's way:
# the project's byte code (read even where PYTHONDONTWRITEBYTECODE is set), and, on every
# `make install` (so also after a kernel was edited), every numba kernel into the per-user
# cache that later processes load (toolkit/kernel_cache.py; 1-3 min on 2 cores the first
# time, 1-2 s when the cache already holds them).
$(STAMP): $(LOCK) pyproject.toml
	$(PYTHON) -m venv --clear $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	$(PY) -m toolkit.versions
	$(PY) -m compileall -q models heuristics instances toolkit benchmarks solve.py
	touch $(STAMP)

install: $(STAMP)
	$(PY) -m toolkit.kernels

# One heuristic and one model per problem type, on shipped instances, with the auto
# backend (HiGHS where the pip licence refuses a model): a gap table on stdout, and
# results/demo/ (records.csv, gap.md, gap.csv, gap-summary.csv, gap.png, one solution JSON
# per run; the four report files are committed). 26 s on 2 cores at load 1.6 (README).
DEMO_FILES := instances/examples/tiny_random_n4_s2.json instances/examples/delta_megatron-177b-n12.json \
	instances/a2a/uniform_n4_k1.json instances/lumos/uniform-rings-P8.json \
	instances/lumos/logical-leaf-triangle-tau1.json instances/lumos/staging-P8-tau1.json \
	instances/lumos/placement-bestfit-48.json instances/lumos/sim-lumos-256.json
DEMO_METHODS := spectra,milp,sqrt-alloc,delta-joint,rdc,exact-k1,uniform-greedy,uniform-ilp,heuristic-decomposition,logical-ilp-min,staging-greedy,staging-ilp,placement-greedy,placement-ilp,simulate,sim-itv-ilp
demo: install
	$(PY) solve.py gap $(DEMO_FILES) --methods $(DEMO_METHODS) --time-limit 20 --out results/demo

test: install
	$(PY) -m pytest -q

# The documentation site (docs/, mkdocs.yml) into site/: warnings, broken links included, are
# errors; the methods, options, instance schemas, CLI reference and reproduce targets are
# generated from the code while it builds (docs/hooks.py, toolkit/docgen.py).
docs: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# Refresh the lock on purpose: newest versions the pyproject ranges admit, for every
# Python from $(LOCK_PYTHON) on (one universal file), then reinstall and run the suite.
# `make lock LOCK_UPGRADE=` adds a new dependency but keeps every existing pin.
LOCK_UPGRADE ?= --upgrade
lock:
	$(PYTHON) -m venv --clear .lockenv
	.lockenv/bin/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	echo "setuptools>=68" | .lockenv/bin/uv pip compile pyproject.toml - --extra test \
	    --extra distributed --extra docs --universal --python-version $(LOCK_PYTHON) --fork-strategy fewest \
	    --generate-hashes $(LOCK_UPGRADE) -o $(LOCK)
	rm -rf .lockenv $(STAMP)
	$(MAKE) test

clean:
	rm -rf $(VENV) .lockenv .pytest_cache site
