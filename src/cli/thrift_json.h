/* thrift_json.h: the CLI's name for common/thrift_json.h (any generated
 * API struct as JSON), for --json output and `stagger job inspect`. Pure;
 * any thread.
 */
#pragma once

#include "common/thrift_json.h"

G_BEGIN_DECLS

/* A new JSON object for @object (stg_thrift_to_json). */
static inline JsonNode *
stg_cli_thrift_to_json (gpointer object)
{
  return stg_thrift_to_json (object);
}

G_END_DECLS
