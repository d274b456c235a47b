/* docker_private.h: what docker.c's request machinery offers the calls in
 * docker_calls.c. Main-loop thread only.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "runtime/fleet/docker.h"

G_BEGIN_DECLS

/* A call's next step, given the reply's status and body. */
typedef void (*ReplyFn) (GTask *task, guint status, GBytes *body);

/* Sends @method @path (under the API prefix) with @body (nullable) as JSON
 * and @auth (nullable: X-Registry-Auth's value), or with @raw (nullable)
 * of type @raw_type, for @task (whose task data is the StgDocker), once
 * the guard lets it; @done gets the reply. A status >= 400 other than
 * @also_ok fails the task with the engine's message. */
void stg_docker_request_full (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                              const gchar *raw_type, GBytes *raw, const gchar *auth, guint also_ok,
                              ReplyFn done);
void stg_docker_request_with (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                              const gchar *auth, guint also_ok, ReplyFn done);
void stg_docker_request (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                         guint also_ok, ReplyFn done);

/* A call's task on @d, tagged with @tag. */
GTask *stg_docker_new_task (StgDocker *d, GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data, gpointer tag);

/* The reply's JSON (bounded in depth), or NULL with @error. */
JsonNode *stg_docker_parse_body (GBytes *body, GError **error);

/* Steps that return TRUE, or the reply's JSON. */
void stg_docker_done_ok (GTask *task, guint status, GBytes *body);
void stg_docker_done_json (GTask *task, guint status, GBytes *body);

G_END_DECLS
