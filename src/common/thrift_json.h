/* thrift_json.h: any generated API struct as JSON: the CLI's --json output
 * and `stagger job inspect`, a task config's fields as lines for the
 * diffs (task_lines.h), and the task an SLA coordinator is sent.
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

/* A new JSON object for @object as Thrift's TSimpleJSONProtocol writes it
 * (Aurora's scheduler so writes a task for an SLA coordinator): fields by
 * name, enums and booleans as numbers (1, 0), every map an object whose
 * keys are text, binaries as their text when it is UTF-8. */
JsonNode *stg_thrift_to_simple_json (gpointer object);

G_END_DECLS
