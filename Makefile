# Two commands on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := data/sample
SAMPLE_COUNT ?= 3000
OUT ?= results
WORKERS ?= 2

.PHONY: venv chromium run test figures bench bench-year bench-store lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The browser tests (tests/html) drive Debian's chromium; installed here when missing and
# apt can (root), else they skip saying so.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium not installed (needs root and apt): the browser tests will skip"

$(SAMPLE)/truth.jsonl: | $(STAMP)
	$(BIN)/mosaic synth year $(SAMPLE) --count $(SAMPLE_COUNT) --seed 2019

# The main job on the built-in default: a generated Blue-Waters-like sample.
run: $(STAMP) $(SAMPLE)/truth.jsonl
	$(BIN)/mosaic run $(SAMPLE) --out $(OUT) --workers $(WORKERS)
	$(BIN)/mosaic eval $(OUT) --truth $(SAMPLE)/truth.jsonl

test: $(STAMP) chromium
	$(BIN)/python -m pytest -q

figures: run
	$(BIN)/mosaic figures $(OUT)

bench: $(STAMP)
	$(BIN)/python -m benchmarks

bench-year: $(STAMP)
	$(BIN)/python -m benchmarks.year

# Ten years of a center in one store (5 M runs, 250,000 groups; ~1 h on 2 cores, ~2.5 GB in /tmp)
bench-store: $(STAMP)
	$(BIN)/python -m benchmarks.bench_store_years

lint: $(STAMP)
	$(BIN)/ruff check mosaic tests benchmarks
	$(BIN)/ruff format --check mosaic tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(SAMPLE) build *.egg-info
