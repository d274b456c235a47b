# src/senders/local.mk: what the engine sends out, below it and beside the
# runtimes: instance gates and pre/post checks (gates), webhooks and
# commands on update events (notify), and the guard on hosts they may
# reach (host_guard).
noinst_LIBRARIES += libstg_senders.a
libstg_senders_a_SOURCES = \
	src/senders/gates.c src/senders/gates.h \
	src/senders/host_guard.c src/senders/host_guard.h \
	src/senders/notify.c src/senders/notify.h src/senders/notify_options.c
EXTRA_DIST += src/senders/local.mk
