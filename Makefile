# Two entry points: `make demo` and `make test`. Both create .venv if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean notebooks-cassette wheel-check

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[notebook,test,postgres,interop,otel,mcp]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m providerkit_nb demo

test: $(STAMP)
	$(PY) -m ruff check providerkit_nb tests bench
	$(PY) -m mypy
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Build the sdist and wheel; install the wheel in a throwaway venv and run its demo elsewhere.
wheel-check: $(STAMP)
	scripts/check_wheel.sh $(PY)

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) build *.egg-info

# Re-make the notebooks' constructed cassette (see scripts/notebook_replay.py).
notebooks-cassette: $(STAMP)
	rm -f cassettes/notebooks.yaml
	cd notebooks && for nb in *.ipynb; do \
		PK_RECORD_NOTEBOOKS=1 OPENAI_API_KEY= IPYTHONDIR=$(CURDIR)/notebooks/offline ../$(PY) -m jupyter execute --timeout=120 $$nb || exit 1; \
	done
