# src/webui/local.mk: the web UI's C code: its routes on the HTTP server,
# its JSON, controls and change feed. A layer above api (it uses the HTTP
# server, auth and metrics) that the daemon wires.
noinst_LIBRARIES += libstg_webui.a
libstg_webui_a_SOURCES = \
	src/webui/webui.c src/webui/webui.h src/webui/webui_private.h \
	src/webui/webui_answer.c \
	src/webui/webui_pages.c \
	src/webui/webui_session.c \
	src/webui/webui_data.c \
	src/webui/webui_update.c \
	src/webui/webui_timeline.c \
	src/webui/webui_plan.c \
	src/webui/webui_wait.c \
	src/webui/webui_sidecar.c \
	src/webui/webui_instance.c
nodist_libstg_webui_a_SOURCES = src/webui/webui-resources.c
EXTRA_DIST += src/webui/local.mk
