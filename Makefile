# Two commands do everything (README): `make run` and `make test`.
# The venv is (re)installed only when pyproject.toml changes: .venv/.installed is the stamp.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXAMPLE ?= resources/examples/h100-64gpu-infiniband.yaml

.PHONY: run test bench package clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/designer-gui $(EXAMPLE)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_search.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/bench_canvas.py

package:
	packaging/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
