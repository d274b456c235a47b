/* task_lines.h: a task config as readable lines, for the diffs people read
 * (`stagger job diff`, job history, the web UI's "Configuration change"),
 * and what a change means for the instances beyond its lines.
 *
 * Every field of the TaskConfig is a line "field: value" (its JSON through
 * thrift_json.h), the executor's JSON data one line per member
 * ("task.NAME: value"), so a field added to the IDL shows up without a
 * change here. Pure; any thread.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

/* The lines of @config (nullable: none), sorted by field. */
GPtrArray *stg_task_lines (ApiTaskConfig *config);

/* What changing @old into @new means beyond its lines, one sentence each
 * (e.g. "constraints changed: instances will be replaced"); empty when
 * nothing needs saying. Either may be NULL. */
GPtrArray *stg_task_change_notes (ApiTaskConfig *old, ApiTaskConfig *new);

G_END_DECLS
