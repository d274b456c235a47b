/* fuzz_webui.c: libFuzzer target for the web UI's control bodies (POST
 * /ui/api/update/<action>): any bytes through stg_webui_action_parse.
 * Nothing may crash, leak or recurse without bound; a parsed body always
 * has a checked job key and an id. */
#include "config.h"

#include "webui/webui_private.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const guint8 *data, gsize size)
{
  g_auto (StgWebUiAction) action = { 0 };
  g_autoptr (GError) error = NULL;

  if (stg_webui_action_parse ((const gchar *) data, size, &action, &error))
    g_assert (action.job != NULL && action.id != NULL && error == NULL);
  else
    g_assert (error != NULL);
  return 0;
}
