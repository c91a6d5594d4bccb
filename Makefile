.PHONY: serve test bench
serve:
	scripts/serve
test:
	scripts/test
bench:
	scripts/bench
