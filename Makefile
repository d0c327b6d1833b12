# The two commands of README.md. Both work on a fresh machine with Python 3.11:
#   make app    installs xcore with the extras the app's buttons use and starts it at http://localhost:8501
#   make test   installs everything (dev + explain + dask extras, Debian's chromium) and runs the whole test suite
PY ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8501

.PHONY: app test install install-dev system-deps bench screenshots

# Install once: a stamp per interpreter records that pip ran for the current pyproject.toml, so
# `make app` starts the server at once while that install is current and reinstalls only after
# pyproject.toml changes (or `make -B install`, or `rm -rf .make`).
STAMPS := .make/$(shell $(PY) -c 'import hashlib, sys; print(hashlib.sha1(sys.executable.encode()).hexdigest()[:10])')

$(STAMPS)/app: pyproject.toml
	$(PY) -m pip install -e ".[explain,onnx]"
	@mkdir -p $(@D) && touch $@

$(STAMPS)/dev: pyproject.toml
	$(PY) -m pip install -e ".[dev,explain,dask,onnx]"
	@mkdir -p $(@D) && touch $@ $(@D)/app

install: $(STAMPS)/app

install-dev: $(STAMPS)/dev

# Debian's chromium drives the real-browser test (never `playwright install`).
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium ; }
	@command -v swipl >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends swi-prolog-nox ; }

app: install
	$(PY) -m streamlit run app.py --server.port $(PORT)

test: system-deps install-dev
	$(PY) -m pytest -n 2 --dist loadgroup

# refresh the README screenshots (tests write to the ignored tests/artifacts/ otherwise)
screenshots: system-deps install-dev
	XCORE_REFRESH_SCREENSHOTS=1 $(PY) -m pytest -m browser -p no:xdist tests/app/test_browser.py tests/app/test_browser_study.py

bench: install
	$(PY) bench/run_all.py
