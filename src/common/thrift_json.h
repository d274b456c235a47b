/* thrift_json.h: any generated API struct as JSON: the CLI's --json output
 * and `stagger job inspect`, and a task config's fields as lines for the
 * diffs (task_lines.h).
 *
 * Fields keep the IDL's names; enum fields (statuses, actions, response
 * codes) are written by name; maps with string keys become objects, other
 * maps arrays of [key, value]; sets are sorted so the output is stable.
 * Pure; any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "common/thrift_glue.h"

G_BEGIN_DECLS

/* A new JSON object for @object. */
JsonNode *stg_thrift_to_json (gpointer object);

G_END_DECLS
