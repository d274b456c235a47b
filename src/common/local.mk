# src/common/local.mk: shared small pieces (lowest layer).
noinst_LIBRARIES += libstg_common.a
libstg_common_a_SOURCES = \
	src/common/binary_protocol.c src/common/binary_protocol.h \
	src/common/clock.c src/common/clock.h \
	src/common/enums.c src/common/enums.h \
	src/common/error.c src/common/error.h \
	src/common/host_policy.c src/common/host_policy.h \
	src/common/jobkey.c src/common/jobkey.h \
	src/common/json_check.c src/common/json_check.h \
	src/common/json_fields.c src/common/json_fields.h \
	src/common/json_write.c src/common/json_write.h \
	src/common/mem_transport.c src/common/mem_transport.h \
	src/common/ranges.c src/common/ranges.h \
	src/common/strings.c src/common/strings.h \
	src/common/task_lines.c src/common/task_lines.h \
	src/common/templates.c src/common/templates.h \
	src/common/thrift_json.c src/common/thrift_json.h \
	src/common/thrift_glue.c src/common/thrift_glue.h \
	src/common/tiers.c src/common/tiers.h
EXTRA_DIST += src/common/local.mk
