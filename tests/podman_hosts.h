/* podman_hosts.h: simulated container hosts for the fleet suites.
 *
 * Starts N real `podman system service` processes on this machine, each with
 * its own storage (--root, --runroot, --tmpdir) and unix socket in one
 * temporary directory, imports locally built images (busybox-static's httpd
 * and a health file, no registry), and stops and removes it all again;
 * and a real registry on loopback for the tests of image pulls.
 * The settings this machine needs (runc, cgroupfs, ulimits within the hard
 * limits, host networking) live in the fixture's containers.conf, never in
 * the product. Test processes only; blocking calls.
 */
#pragma once

#include <check.h>
#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct
{
  gchar *name;        /* "host0", "host1", ... */
  gchar *root;        /* this host's folder: storage, runroot, socket */
  gchar *socket_path; /* the Docker-API unix socket */
  gchar *endpoint;    /* "unix://" + socket_path */
  GSubprocess *service;
} StgTestPodmanHost;

typedef struct
{
  gchar *dir;       /* every host's folder and containers.conf live here */
  gchar *conf_path; /* containers.conf */
  GPtrArray *hosts; /* StgTestPodmanHost* */
} StgTestPodman;

/* Starts @n podman services in a new temporary directory and waits until
 * each answers /_ping. Fails the test (saying how to install podman) when
 * podman is missing. */
StgTestPodman *stg_test_podman_start (guint n);

/* Stops every service, removes the containers and the storage (mounts
 * included). */
void stg_test_podman_stop (StgTestPodman *fleet);

/* Builds an image from busybox-static: httpd, sh, and /www/health and
 * /www/version holding @version, imported into every host as @tag
 * (e.g. "localhost/stagger-test:1"). */
void stg_test_podman_import (StgTestPodman *fleet, const gchar *tag, const gchar *version);

/* The same image with @programs (paths of static programs on this
 * machine, NULL-terminated) copied into its /bin. */
void stg_test_podman_import_with (StgTestPodman *fleet, const gchar *tag, const gchar *version,
                                  const gchar *const *programs);

/* Runs the podman command line against @host with @args (NULL-terminated),
 * turning the default main context until it ends; returns its standard
 * output, fails the test if it fails. */
gchar *stg_test_podman_cli (StgTestPodman *fleet, StgTestPodmanHost *host, ...) G_GNUC_NULL_TERMINATED;

/* Stops one host's service (SIGTERM, waits) or starts it again: its
 * containers keep running, as on a machine whose engine went away. */
void stg_test_podman_host_down (StgTestPodmanHost *host);
void stg_test_podman_host_up (StgTestPodman *fleet, StgTestPodmanHost *host);

/* The port of the test registry on loopback: every host's registries.conf
 * lets it be reached over plain HTTP. */
#define STG_TEST_REGISTRY_PORT 16090
#define STG_TEST_REGISTRY "127.0.0.1:16090"

typedef struct
{
  gchar *dir;           /* its storage, config and htpasswd */
  GSubprocess *process; /* Debian's docker-registry (the distribution registry) */
} StgTestRegistry;

/* Starts docker-registry on STG_TEST_REGISTRY with its storage in a new
 * temporary directory; with @user and @password (nullable), it asks for
 * them (htpasswd, bcrypt). Waits until it answers /v2/. Fails the test,
 * saying how to install it, when docker-registry is missing. */
StgTestRegistry *stg_test_registry_start (const gchar *user, const gchar *password);
void stg_test_registry_stop (StgTestRegistry *registry);

/* Pushes @tag from @host's storage to the test registry as @name
 * ("stagger/web:1"), with @creds ("user:password", nullable). */
void stg_test_podman_push (StgTestPodman *fleet, StgTestPodmanHost *host, const gchar *tag,
                           const gchar *name, const gchar *creds);

/* TRUE when something accepts connections on 127.0.0.1:@port. */
gboolean stg_test_port_open (guint16 port);

/* Waits up to @timeout_ms until GET @path on 127.0.0.1:@port answers 200
 * with the body @body; returns whether it did. */
gboolean stg_test_wait_http_body (guint16 port, const gchar *path, const gchar *body, guint timeout_ms);

/* For a suite's main(), after a failed test skipped its teardown: kills
 * every process whose command line names a folder under @dir (conmon,
 * containers' init, services) and unmounts what podman mounted there. */
void stg_test_podman_purge (const gchar *dir);

/* A suite's whole main(): runs @suite in a scope of its own
 * (stg_test_scope_begin), purges what podman left there and ends the
 * scope; the exit status (0 when every test passed). */
int stg_test_podman_main (Suite *suite);

G_END_DECLS
