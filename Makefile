# Two commands on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := data/sample
SAMPLE_COUNT ?= 3000
OUT ?= results
WORKERS ?= 2

.PHONY: venv chromium slurm run test figures bench bench-year bench-store lint clean

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

# The scheduler tests need Debian's Slurm and munge (tests/slurm: a real slurmctld and slurmd)
# and each Lua interpreter Slurm's lua plugins may link (tests/service/test_cli_filter.py);
# installed here when one is missing and apt can (root), else those tests skip saying so.
SLURM_PACKAGES := slurm-wlm munge lua5.1 lua5.2 lua5.3 lua5.4 luajit
SLURM_COMMANDS := /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/sbatch \
  /usr/bin/lua5.1 /usr/bin/lua5.2 /usr/bin/lua5.3 /usr/bin/lua5.4 /usr/bin/luajit
slurm:
	@missing=; for c in $(SLURM_COMMANDS); do [ -x $$c ] || missing=1; done; [ -z "$$missing" ] || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SLURM_PACKAGES) >/dev/null; } || \
	  echo "Slurm, munge or a Lua interpreter not installed (needs root and apt): their tests will skip"

$(SAMPLE)/truth.jsonl: | $(STAMP)
	$(BIN)/mosaic synth year $(SAMPLE) --count $(SAMPLE_COUNT) --seed 2019

# The main job on the built-in default: a generated Blue-Waters-like sample.
run: $(STAMP) $(SAMPLE)/truth.jsonl
	$(BIN)/mosaic run $(SAMPLE) --out $(OUT) --workers $(WORKERS)
	$(BIN)/mosaic eval $(OUT) --truth $(SAMPLE)/truth.jsonl

test: $(STAMP) chromium slurm
	$(BIN)/python -m pytest -q

figures: run
	$(BIN)/mosaic figures $(OUT)

bench: $(STAMP)
	$(BIN)/python -m benchmarks

bench-year: $(STAMP)
	$(BIN)/python -m benchmarks.year

# Ten years of a center in one store (5 M runs, 250,000 groups; ~15 min on 2 cores, ~5 GB in /tmp)
bench-store: $(STAMP)
	$(BIN)/python -m benchmarks.bench_store_years

lint: $(STAMP)
	$(BIN)/ruff check mosaic tests benchmarks
	$(BIN)/ruff format --check mosaic tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(SAMPLE) build *.egg-info
