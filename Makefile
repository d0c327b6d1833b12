# The two commands of README.md. Both work on a fresh machine with Python 3.11:
#   make app    installs everything and starts the app at http://localhost:8501 (bundled samples)
#   make test   installs everything (dev + explain extras, Debian's chromium) and runs the whole test suite
PY ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8501

.PHONY: app test install install-dev system-deps bench

install:
	$(PY) -m pip install -e .

install-dev:
	$(PY) -m pip install -e ".[dev,explain]"

# Debian's chromium drives the real-browser test (never `playwright install`).
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium ; }

app: install
	$(PY) -m streamlit run app.py --server.port $(PORT)

test: system-deps install-dev
	$(PY) -m pytest -n 2 --dist loadgroup

bench: install
	$(PY) bench/run_all.py
