# webui/local.mk: the web UI's static files, embedded in staggerd with
# GResource (staggerd --webui-dir serves them from a folder instead).
STG_WEBUI_FILES = \
	$(srcdir)/webui/index.html \
	$(srcdir)/webui/app.css \
	$(srcdir)/webui/app.js \
	$(srcdir)/webui/favicon.svg

src/webui/webui-resources.c: $(srcdir)/webui/webui.gresource.xml $(STG_WEBUI_FILES)
	$(AM_V_GEN)$(MKDIR_P) src/webui && \
	$(GLIB_COMPILE_RESOURCES) --target=$@ --sourcedir=$(srcdir)/webui \
	  --generate-source --c-name stg_webui $(srcdir)/webui/webui.gresource.xml
BUILT_SOURCES += src/webui/webui-resources.c
CLEANFILES += src/webui/webui-resources.c
EXTRA_DIST += webui/local.mk webui/webui.gresource.xml $(STG_WEBUI_FILES)
