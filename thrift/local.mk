# thrift/local.mk: generates Thrift C GLib code from thrift/stagger.thrift into
# the build tree (src/gen/) and builds it as libstg_gen.a. The generated code
# is compiled without warnings: it is not ours to fix.

STG_GENERATED_C = \
	src/gen/api_stagger_types.c \
	src/gen/api_read_only_scheduler.c \
	src/gen/api_aurora_scheduler_manager.c \
	src/gen/api_aurora_admin.c \
	src/gen/api_stagger_scheduler.c
STG_GENERATED_H = $(STG_GENERATED_C:.c=.h)

# Generator bugs are repaired (see fix-generated.awk and fix-processor.awk);
# the build stops if the number of places patched is not the expected one.
src/gen/.stamp: $(srcdir)/thrift/stagger.thrift $(srcdir)/thrift/fix-generated.awk \
		$(srcdir)/thrift/fix-processor.awk
	$(AM_V_GEN)rm -rf src/gen && $(MKDIR_P) src/gen && \
	$(THRIFT_COMPILER) --gen c_glib -out src/gen $(srcdir)/thrift/stagger.thrift && \
	want=`grep -c '^api_[a-z0-9_]*_finalize (GObject \*object)$$' src/gen/api_stagger_types.c` && \
	$(AWK) -f $(srcdir)/thrift/fix-generated.awk src/gen/api_stagger_types.c \
	  > src/gen/types.tmp 2> src/gen/patched.count && \
	test "`cat src/gen/patched.count`" = "$$want" && \
	mv src/gen/types.tmp src/gen/api_stagger_types.c && \
	for f in api_read_only_scheduler api_aurora_scheduler_manager api_aurora_admin \
	    api_stagger_scheduler; do \
	  $(AWK) -f $(srcdir)/thrift/fix-processor.awk src/gen/$$f.c > src/gen/$$f.tmp \
	    2> src/gen/patched.count && \
	  test "`cat src/gen/patched.count`" = 1 && mv src/gen/$$f.tmp src/gen/$$f.c || exit 1; \
	done && \
	touch $@

$(STG_GENERATED_C) $(STG_GENERATED_H): src/gen/.stamp

BUILT_SOURCES += src/gen/.stamp
noinst_LIBRARIES += libstg_gen.a
nodist_libstg_gen_a_SOURCES = $(STG_GENERATED_C) $(STG_GENERATED_H)
libstg_gen_a_CPPFLAGS = -I$(top_builddir)/src/gen
libstg_gen_a_CFLAGS = -w $(SANITIZER_CFLAGS) $(GLIB_CFLAGS) $(THRIFT_CFLAGS)

EXTRA_DIST += thrift/stagger.thrift thrift/local.mk thrift/fix-generated.awk \
	thrift/fix-processor.awk
clean-local: clean-gen
clean-gen:
	-rm -rf src/gen
.PHONY: clean-gen

# g_autoptr() support for every generated struct, made from the generated
# header's own type list, so new IDL types need no hand edits.
src/gen/api_autoptr.h: src/gen/.stamp
	$(AM_V_GEN)( echo '/* Generated from the Thrift headers: g_autoptr() for their types. */'; \
	  echo '#pragma once'; \
	  for h in $(STG_GENERATED_H); do echo "#include \"$$(basename $$h)\""; done; \
	  cat $(STG_GENERATED_H) | \
	  $(SED) -n 's/^typedef struct _\(Api[A-Za-z0-9]*\) \1;.*$$/\1/p' | \
	  grep -v -e 'Class$$' -e 'If$$' -e 'IfInterface$$' | sort -u | \
	  $(SED) 's/.*/G_DEFINE_AUTOPTR_CLEANUP_FUNC (&, g_object_unref)/' ) > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += src/gen/api_autoptr.h
