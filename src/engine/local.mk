# src/engine/local.mk: the scheduler core (pure logic behind clock, store, runtime).
noinst_LIBRARIES += libstg_engine.a
libstg_engine_a_SOURCES = \
	src/engine/engine.c src/engine/engine.h src/engine/engine_private.h src/engine/work_state.h \
	src/engine/control.c \
	src/engine/diff.c \
	src/engine/errors.c \
	src/engine/gate.c src/engine/gate_private.h \
	src/engine/jobs.c \
	src/engine/maintenance.c \
	src/engine/notice.c src/engine/notice_private.h \
	src/engine/plan.c src/engine/plan_private.h src/engine/plan_calls.c \
	src/engine/plan_stage.c src/engine/plan_state.c src/engine/plan_view.c \
	src/engine/progress.c \
	src/engine/quota.c src/engine/task_private.h \
	src/engine/reasons.c \
	src/engine/reconcile.c src/engine/reconcile_private.h \
	src/engine/recover.c \
	src/engine/service.c \
	src/engine/rehearsal.c src/engine/rehearsal_private.h \
	src/engine/settings.c src/engine/settings_private.h \
	src/engine/sidecar.c src/engine/sidecar_calls.c src/engine/sidecar_private.h \
	src/engine/sla.c src/engine/sla_private.h src/engine/sla_body.c \
	src/engine/starts.c \
	src/engine/step.c src/engine/step_private.h \
	src/engine/surge.c src/engine/surge_private.h \
	src/engine/task_fields.c \
	src/engine/timeline.c src/engine/timeline.h \
	src/engine/update.c src/engine/update_private.h \
	src/engine/work.c src/engine/work_gates.c
EXTRA_DIST += src/engine/local.mk
