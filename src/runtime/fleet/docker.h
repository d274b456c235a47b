/* docker.h: a client of one container engine's Docker Engine HTTP API
 * (Docker or Podman): ping, pull, import, create, start, stop, remove,
 * inspect, stat of a path, list by label, and exec. Speaks HTTP over a
 * unix socket (unix:///path) or TCP (tcp://host:port, with TLS when given
 * a client certificate, key and CA),
 * through libsoup. Calls no other layer. Main-loop thread only: every call
 * is asynchronous on the thread-default main context, takes a GCancellable,
 * and calls back exactly once unless it fails up front (then never).
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define STG_DOCKER_ERROR (stg_docker_error_quark ())
GQuark stg_docker_error_quark (void);
typedef enum
{
  STG_DOCKER_ERROR_FAILED,      /* the engine refused (message verbatim) */
  STG_DOCKER_ERROR_NOT_FOUND,   /* 404: no such container, image or exec */
  STG_DOCKER_ERROR_CONFLICT,    /* 409: e.g. the name is taken */
  STG_DOCKER_ERROR_UNREACHABLE, /* no answer: connection refused, timeout */
  STG_DOCKER_ERROR_INVALID,     /* a bad endpoint or TLS file, a bad reply */
} StgDockerError;

typedef struct _StgDocker StgDocker;

/* TLS material for a tcp:// endpoint; all NULL for plain HTTP. */
typedef struct
{
  const gchar *cert_file; /* client certificate (PEM) */
  const gchar *key_file;  /* its key (PEM) */
  const gchar *ca_file;   /* CA that signed the engine's certificate */
} StgDockerTls;

/* A client of the engine at @endpoint ("unix:///run/podman/podman.sock",
 * "tcp://10.0.0.5:2376"). @tls (nullable) applies to tcp:// only. Calls
 * that see no data for @timeout_secs fail as UNREACHABLE, and so do calls
 * that get no connection within it. */
StgDocker *stg_docker_new (const gchar *endpoint, const StgDockerTls *tls, guint timeout_secs,
                           GError **error);
void stg_docker_free (StgDocker *docker);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgDocker, stg_docker_free)

/* Asked before every request that may change something on the engine
 * (every method but GET: create, start, stop, remove, exec, pull), with
 * its method and path: TRUE sends it now; FALSE holds it back, and the
 * guard is asked again every 50 ms until it says TRUE or the call is
 * cancelled (then it fails as cancelled, never sent). The guard is asked
 * again just before the request is written on a connection (it may have
 * waited for one): FALSE then fails it as UNREACHABLE, not sent. With
 * @bound_ms (0: none), every TCP connection to the engine, once made,
 * gives up when what it sent has gone @bound_ms unacknowledged
 * (TCP_USER_TIMEOUT) and drops what it could not send when closed
 * (SO_LINGER 0): a request reaches the engine within @bound_ms of being
 * written or never, and the guard says TRUE only when that is soon
 * enough. */
typedef gboolean (*StgDockerGuard) (gpointer data, const gchar *method, const gchar *path);
void stg_docker_set_guard (StgDocker *docker, StgDockerGuard guard, gpointer data, guint bound_ms);

/* GET /_ping. */
void stg_docker_ping_async (StgDocker *docker, GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);
gboolean stg_docker_ping_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* Registry credentials for a pull: sent as X-Registry-Auth. */
typedef struct
{
  const gchar *user;
  const gchar *password;
  const gchar *server; /* (nullable) the registry, e.g. "registry.example.com:5000" */
} StgDockerAuth;

/* POST /images/create?fromImage=...&tag=...: the engine pulls @image
 * ("name[:tag]" or "name@digest"; no tag: "latest") with @auth (nullable).
 * An error the engine reports in its progress stream fails the call with
 * its message. Finish with stg_docker_finish. */
void stg_docker_pull_async (StgDocker *docker, const gchar *image, const StgDockerAuth *auth,
                            GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);

/* POST /images/create?fromSrc=-&repo=@image ("name:tag") with @tar (a
 * file system as a tar archive) as the body: the engine makes an image of
 * it. Finish with stg_docker_finish. */
void stg_docker_import_async (StgDocker *docker, const gchar *image, GBytes *tar,
                              GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data);

/* POST /containers/create?name=@name with @spec (Image, Cmd, Env, Labels,
 * HostConfig...; borrowed). Finishes with the new container's id. */
void stg_docker_create_async (StgDocker *docker, const gchar *name, JsonNode *spec,
                              GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gchar *stg_docker_create_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* POST /containers/@id/start (already running is success). */
void stg_docker_start_async (StgDocker *docker, const gchar *id, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data);
/* POST /containers/@id/stop?t=@timeout_secs: SIGTERM (or the image's stop
 * signal), SIGKILL after @timeout_secs (already stopped is success). */
void stg_docker_stop_async (StgDocker *docker, const gchar *id, guint timeout_secs,
                            GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
/* DELETE /containers/@id?force=true&v=true, its anonymous volumes with it
 * (already gone is success). */
void stg_docker_remove_async (StgDocker *docker, const gchar *id, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
/* HEAD /containers/@id/archive?path=@path: whether @path exists in the
 * container's file system (STG_DOCKER_ERROR_NOT_FOUND when it does not). */
void stg_docker_stat_async (StgDocker *docker, const gchar *id, const gchar *path,
                            GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);

/* The finish of start, stop, remove, pull, import and stat. */
gboolean stg_docker_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* GET /containers/@id/json. Finishes with the engine's JSON object. */
void stg_docker_inspect_async (StgDocker *docker, const gchar *id, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
JsonNode *stg_docker_inspect_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* GET /containers/json?all=true with a label filter: containers carrying
 * every one of @labels ("key" or "key=value", NULL-terminated). Finishes
 * with the engine's JSON array. */
void stg_docker_list_async (StgDocker *docker, const gchar *const *labels, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);
JsonNode *stg_docker_list_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* Runs @argv inside container @id (create an exec, start it attached,
 * read its output, then its exit code), with @env ("NAME=value",
 * NULL-terminated; nullable) over the container's own environment. */
void stg_docker_exec_async (StgDocker *docker, const gchar *id, const gchar *const *argv,
                            const gchar *const *env, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);
/* The exit code (*@exit_code) and, when @output is not NULL, stdout and
 * stderr together (at most 64 KiB, the rest dropped). */
gboolean stg_docker_exec_finish (StgDocker *docker, GAsyncResult *result, gint *exit_code, gchar **output,
                                 GError **error);

/* The streams a logs call reads (bits of @streams). */
#define STG_DOCKER_STDOUT (1u << 1)
#define STG_DOCKER_STDERR (1u << 2)
/* The most a logs call keeps: the first bytes, the rest dropped. */
#define STG_DOCKER_LOGS_MAX (4 * 1024 * 1024)

/* GET /containers/ID/logs: what the container wrote to the streams in
 * @streams (together, as they came), its last @tail lines (-1: all), at
 * most STG_DOCKER_LOGS_MAX bytes; finishes with it as UTF-8. */
void stg_docker_logs_async (StgDocker *docker, const gchar *id, gint tail, guint streams,
                            GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);
gchar *stg_docker_logs_finish (StgDocker *docker, GAsyncResult *result, GError **error);

/* GET /containers/@id/archive?path=@path: the regular file @path names in
 * the container's file system, running or stopped, read whole from the
 * tar stream the engine answers with (Docker, and Podman's compatible
 * API). Finishes with its bytes; STG_DOCKER_ERROR_NOT_FOUND when the
 * container or the file does not exist, _INVALID when @path is not a
 * regular file or the stream is not a tar archive. */
void stg_docker_archive_async (StgDocker *docker, const gchar *id, const gchar *path,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data);
GBytes *stg_docker_archive_finish (StgDocker *docker, GAsyncResult *result, GError **error);

G_END_DECLS
