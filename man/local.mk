# man/local.mk: manual pages.
dist_man_MANS += man/staggerd.8 man/stagger.1 man/stagger-job.5 man/stagger-plan.5 \
	man/stagger-sidecar.5 man/stagger-example-server.1 \
	man/stagger-thermos.8
EXTRA_DIST += man/local.mk
