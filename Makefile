# Two commands do everything (README): `make run` and `make test`.
# The venv is (re)installed only when pyproject.toml changes: .venv/.installed is the stamp.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make run` opens the built-in example with the welcome hint; `make run FILE=my.yaml` opens a file.
FILE ?=

.PHONY: run test bench package clean check-qt-libs

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP) check-qt-libs
	$(BIN)/designer-gui $(FILE)

# Qt's xcb platform plugin needs these system libraries; say the apt command instead of Qt's abort.
check-qt-libs: $(STAMP)
	@$(BIN)/python packaging/check_qt_libs.py

# The test processes keep their compiled modules (__pycache__, ignored by git) even where the shell
# sets PYTHONDONTWRITEBYTECODE: otherwise each of pytest-xdist's processes compiles the package and
# rewrites the tests again on every run (about 7 s of CPU each).
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_search.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/bench_canvas.py

package:
	packaging/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
