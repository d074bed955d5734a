# The two set-up commands of the README: `make demo` and `make test`.
# Both create (or reuse) a local virtual environment in .venv.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint browser node floor display-screenshots swap-hand-sheet

$(BIN)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# A full-size table: 7 Baccarat seats on simulated MCP23017 expanders and the dealer panel (docs/wiring.md).
demo: $(BIN)/.installed
	$(BIN)/croupier demo --table firmware_configs/tables/baccarat_7seat_sim.yaml

lint: $(BIN)/.installed
	$(BIN)/ruff check controller drivers vision signage pitboard tests bench examples
	$(BIN)/mypy controller drivers signage pitboard vision
	$(BIN)/lint-imports

# The signage page's browser tests drive Debian's Chromium (Playwright comes with the dev extra and
# is pointed at /usr/bin/chromium; it never downloads a browser). Installed here when missing and
# we are root; otherwise the browser tests say loudly why they are skipped.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the signage browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# docs/img/display_*.png: every game at every screen size docs/display.md lists, and in every language.
display-screenshots: $(BIN)/.installed browser
	$(BIN)/python tests/display_screenshots.py

# examples/node-follower (a display feed in JavaScript, tested against a real daemon) needs Node and
# its npm packages (zeromq ships its libzmq build inside the package). Debian's nodejs and npm are
# installed when missing and we are root; `npm ci` runs when the lock file is newer than the install.
# Without Node its tests say loudly that they are skipped.
NODE_FOLLOWER := examples/node-follower
node:
	@if ! command -v npm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's nodejs and npm for examples/node-follower"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -f $(NODE_FOLLOWER)/node_modules/.package-lock.json ] || \
		   [ $(NODE_FOLLOWER)/package-lock.json -nt $(NODE_FOLLOWER)/node_modules/.package-lock.json ]; then \
			echo "npm ci in $(NODE_FOLLOWER)"; \
			cd $(NODE_FOLLOWER) && npm ci --no-audit --no-fund --loglevel=error; \
		fi; \
	else echo "no npm: the Node follower's tests will be skipped"; fi

# The floor's tests (tests/test_floor_*.py) start their own nats-server (JetStream) and PostgreSQL 15
# from Debian's packages in temporary folders. Installed here when missing and we are root; without
# them and without root, `make test` stops here with one line naming the packages (never a silent skip).
floor:
	@if ! command -v nats-server >/dev/null 2>&1 || [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing Debian's nats-server and postgresql for the floor tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server postgresql >/dev/null; \
		else echo "the floor tests need Debian's packages nats-server and postgresql (apt-get install nats-server postgresql, as root)"; exit 1; fi; \
	fi

# The suite in worker processes (pytest-xdist), a test file's tests in one worker in their order. Most of
# its time is spent waiting on daemons, sockets and servers (the CPU is busy 1.4 of 2 cores' time), so
# half as many workers again as CPUs: 3 on 2 cores took 639 s where 2 took 830 (2026-12-06).
# PYTEST_XDIST_AUTO_NUM_WORKERS=N chooses the number. docs/testing.md says how.
PYTEST_XDIST_AUTO_NUM_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n + (n + 1) / 2)))
export PYTEST_XDIST_AUTO_NUM_WORKERS
# Bytecode is written (PYTHONDONTWRITEBYTECODE unset, if the environment sets it): without it every worker
# and every daemon a test starts compiled the project from source again, and pytest rewrote every test
# module's assertions in each worker: 18.6 s of CPU for one collection of the suite, 5.8 s with it.
test: lint browser node floor
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n auto --dist loadfile

# The exact Swap-Hand sheet of the table defaults, recomputed (minutes, at low priority): the stored
# figures `croupier math swap_hand` prints, then their document (docs/strategy/exact.md).
swap-hand-sheet: $(BIN)/.installed
	nice -n 10 $(BIN)/croupier math swap_hand --recompute --workers 2 --format stored \
		--output controller/games/swap_hand/exact_defaults.json
	$(BIN)/croupier math swap_hand --format markdown --output docs/strategy/swap_hand_exact.md
