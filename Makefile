# One-command set-up: a virtual environment with the package (editable, for development) and its test tools.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean jdk chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	# what pip does when it installs: on PYTHONDONTWRITEBYTECODE=1 machines pip writes no bytecode, and every
	# process (each test's scan processes too) would compile the package and its libraries from source
	$(BIN)/python -m compileall -q -j 0 rebalance_doctor $$($(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") > /dev/null
	touch $(STAMP)

demo: $(STAMP)
	@for incident in sample_logs/*/; do $(BIN)/rebalance-doctor report "$$incident" || exit $$?; done

# The Java regex dialect test (Spark's dialect) runs java.util.regex through a single-file Java program.
jdk:
	@command -v javac >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless; }

# The HTML report is tested in a real headless Chromium (Debian's chromium + chromium-driver).
chromium:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver; }

# The linter, the suite (with the wheel installed into a fresh environment: tests/test_wheel.py), then the
# line-accounting property test again under its 10,000-example profile. UPDATE_GOLDEN=1 rewrites tests/golden/.
test: $(STAMP) jdk chromium
	$(BIN)/ruff check rebalance_doctor tests bench
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest tests/test_line_accounting.py --hypothesis-profile=accounting -q

bench: $(STAMP)
	@command -v rg >/dev/null || { echo "bench needs ripgrep: apt-get install -y ripgrep"; exit 2; }
	$(BIN)/python bench/run.py --suite

clean:
	rm -rf $(VENV) .pytest_cache bench/corpus bench/results
