# Entry points (README Quickstart): `make demo`, `make test`; `make lock` refreshes the lock.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK   := requirements.lock
# the lock tool itself is pinned too; `make lock` installs it into its own venv
UV_VERSION := 0.13.9
LOCK_PYTHON := 3.10

.PHONY: demo test install lock clean

# The venv holds exactly the locked versions (hash-checked, no resolver, no build step
# that downloads anything); the project itself is installed editable without build
# isolation, from the locked setuptools.
$(STAMP): $(LOCK) pyproject.toml
	$(PYTHON) -m venv --clear $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	$(PY) -m toolkit.versions
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) solve.py batch instances/examples --methods spectra,spectra-noeq,milp,prop-alloc,sqrt-alloc,iter-halve --time-limit 20 --out results/demo

test: $(STAMP)
	$(PY) -m pytest -q

# Refresh the lock on purpose: newest versions the pyproject ranges admit, for every
# Python from $(LOCK_PYTHON) on (one universal file), then reinstall and run the suite.
lock:
	$(PYTHON) -m venv --clear .lockenv
	.lockenv/bin/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	echo "setuptools>=68" | .lockenv/bin/uv pip compile pyproject.toml - --extra test \
	    --extra distributed --universal --python-version $(LOCK_PYTHON) --fork-strategy fewest \
	    --generate-hashes --upgrade -o $(LOCK)
	rm -rf .lockenv $(STAMP)
	$(MAKE) test

clean:
	rm -rf $(VENV) .lockenv .pytest_cache
