# Two entry points (README Quickstart): `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,distributed]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) solve.py batch instances/examples --methods spectra,spectra-noeq,milp,prop-alloc,sqrt-alloc,iter-halve --time-limit 20 --out results/demo.csv

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache
