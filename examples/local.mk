# examples/local.mk: the example service the demo and the tests run, and the
# example job files.
bin_PROGRAMS += stagger-example-server
stagger_example_server_SOURCES = examples/example-server.c
stagger_example_server_CPPFLAGS =
stagger_example_server_CFLAGS = -std=gnu11 $(WARN_CFLAGS) $(WERROR_CFLAGS) $(SANITIZER_CFLAGS)
stagger_example_server_LDADD =
EXTRA_DIST += examples/local.mk
EXTRA_DIST += examples/README.md examples/hello.json examples/hello-v2.json \
	examples/hello-coordinated.json examples/hot.json examples/hot-v2.json \
	examples/hello-broken.json
EXTRA_DIST += examples/fleet-web.json examples/fleet-web-v2.json examples/fleet-proxy.json
# A rollout plan in Pravega's order: three jobs, gated, and a broken variant.
EXTRA_DIST += examples/pravega/bookkeeper.json examples/pravega/bookkeeper-release.json \
	examples/pravega/controller.json examples/pravega/controller-release.json \
	examples/pravega/segmentstore.json examples/pravega/segmentstore-release.json \
	examples/pravega/segmentstore-broken.json \
	examples/pravega/plan.json examples/pravega/plan-broken.json
# Aurora's hello_world tutorial, as the aurora client sends it (AuroraExecutor).
EXTRA_DIST += examples/aurora/README.md examples/aurora/hello_world.json \
	examples/aurora/hello_world.py examples/aurora/hello_world_job.json
