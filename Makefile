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

# The peers it compares against (the `bench` extra; `fast-json` too, as a user who reads large
# transcripts would have it) and the same throwaway PostgreSQL server as
# .ci/run (unless PROVIDERKIT_PG_DSN names one), stopped however the run ends; without a server
# the PostgreSQL rows say why. A MISS fails the run; a row that could not run is information
# only. BENCH_ARGS: e.g. BENCH_ARGS='--only stream'.
BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[notebook,test,postgres,interop,otel,mcp,bench,fast-json]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	@set -e; \
	if [ -n "$${PROVIDERKIT_PG_DSN:-}" ]; then \
		echo "make bench: using the PostgreSQL server of PROVIDERKIT_PG_DSN" >&2; \
	elif pg="$$(scripts/pg-test-server.sh start)"; then \
		eval "$$pg"; trap 'scripts/pg-test-server.sh stop "$$PROVIDERKIT_PG_DIR"' EXIT; \
	else \
		echo "make bench: no local PostgreSQL (see above); its rows will say so" >&2; \
	fi; \
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info

# Re-make the notebooks' constructed cassette (see scripts/notebook_replay.py).
notebooks-cassette: $(STAMP)
	rm -f cassettes/notebooks.yaml
	cd notebooks && for nb in *.ipynb; do \
		PK_RECORD_NOTEBOOKS=1 OPENAI_API_KEY= IPYTHONDIR=$(CURDIR)/notebooks/offline ../$(PY) -m jupyter execute --timeout=120 $$nb || exit 1; \
	done
