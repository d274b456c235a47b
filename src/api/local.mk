# src/api/local.mk: Thrift handler, dispatch, TCP and HTTP servers.
noinst_LIBRARIES += libstg_api.a
libstg_api_a_SOURCES = \
	src/api/auth.c src/api/auth.h src/api/auth_private.h \
	src/api/auth_check.c src/api/auth_secret.c \
	src/api/body_buffer.c src/api/body_buffer.h \
	src/api/dispatch.c src/api/dispatch.h \
	src/api/handler.c src/api/handler.h src/api/handler_private.h \
	src/api/handler_admin.c src/api/handler_answer.c src/api/handler_aurora.c \
	src/api/handler_jobs.c src/api/handler_plans.c \
	src/api/handler_maintenance.c src/api/handler_recovery.c \
	src/api/handler_tasks.c \
	src/api/handler_stagger.c \
	src/api/handler_sidecars.c \
	src/api/handler_updates.c \
	src/api/http_api.c src/api/http_api.h \
	src/api/http_guard.c src/api/http_guard.h \
	src/api/http_server.c src/api/http_server.h src/api/http_private.h src/api/http_request.c \
	src/api/json_protocol.c src/api/json_protocol.h src/api/json_protocol_private.h \
	src/api/json_context.c src/api/json_reader.c src/api/json_writer.c \
	src/api/reply_cache.c src/api/reply_cache.h \
	src/api/metrics.c src/api/metrics.h \
	src/api/conditions.c src/api/conditions.h \
	src/api/plan_details.c src/api/plan_details.h \
	src/api/response.c src/api/response.h \
	src/api/tcp_server.c src/api/tcp_server.h
EXTRA_DIST += src/api/local.mk
