/* example-server.c: stagger-example-server, a tiny HTTP service for
 * Stagger's demo and tests.
 *
 * Serves "/" (a line naming its version and instance), "/health" ("ok", or
 * 500 with --unhealthy), "/version", and "/ledgers" (as a BookKeeper
 * bookie would say how many ledgers are under-replicated: with
 * --rereplicate-secs, some for that long after it starts, then none; the
 * Pravega example's instance gates ask it). Takes its listening socket from the
 * systemd protocol (LISTEN_FDS, LISTEN_PID) when given one, so a hot upgrade
 * can hand the socket from one version to the next; otherwise binds
 * 127.0.0.1:--port. On SIGTERM it stops accepting, finishes the request at
 * hand and exits 0. Its first passing health check prints a "ready:" line
 * with its start time and that check's time. One connection at a time;
 * plain POSIX.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void
on_term (int sig)
{
  (void) sig;
  stopping = 1;
}

static void
usage (FILE *to)
{
  fprintf (to, "Usage: stagger-example-server [--port PORT] [--unhealthy] [--crash-after SECS]\n"
               "                              [--start-delay SECS] [--rereplicate-secs SECS]\n"
               "\n"
               "A tiny HTTP service to try Stagger with. It answers / with its version and\n"
               "instance (STAGGER_VERSION, STAGGER_INSTANCE), /health with \"ok\", and takes its\n"
               "socket from LISTEN_FDS when Stagger hands one over (hot upgrade).\n"
               "\n"
               "  --port PORT         listen on 127.0.0.1:PORT (default: $PORT, else 8080)\n"
               "  --unhealthy         answer /health with 500 \"failing\" (to see a rollback)\n"
               "  --crash-after SECS  exit with status 1 after SECS seconds\n"
               "  --start-delay SECS  wait SECS seconds before listening\n"
               "  --rereplicate-secs SECS\n"
               "                      /ledgers says ledgers are under-replicated for SECS\n"
               "                      seconds after the start, as a restarted bookie would\n"
               "  --help              show this help\n");
}

#define MAX_SOCKETS 8

/* The sockets Stagger handed over (3, 4, ...), or 0. Every one is served:
 * during a hot upgrade one of them is the new version's private probe
 * socket, where Stagger checks this process's health alone. */
static int
sockets_from_env (int *fds)
{
  const char *n = getenv ("LISTEN_FDS");
  const char *pid = getenv ("LISTEN_PID");

  if (n == NULL || pid == NULL || atoi (n) < 1 || atol (pid) != (long) getpid ())
    return 0;
  int count = atoi (n) < MAX_SOCKETS ? atoi (n) : MAX_SOCKETS;
  for (int i = 0; i < count; i++)
    fds[i] = 3 + i;
  return count;
}

static int
bind_port (int port)
{
  struct sockaddr_in sa = { 0 };
  int one = 1;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return -1;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sa.sin_family = AF_INET;
  sa.sin_port = htons ((unsigned short) port);
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) != 0 || listen (fd, 128) != 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static void
answer_typed (int fd, int code, const char *type, const char *body)
{
  char head[256];
  int n = snprintf (head, sizeof head,
                    "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    code,
                    code == 200   ? "OK"
                    : code == 404 ? "Not Found"
                                  : "Error",
                    type, strlen (body));
  if (write (fd, head, (size_t) n) < 0 || write (fd, body, strlen (body)) < 0)
    return;
}

/* When the process started, and whether it has passed a health check
 * yet: the first passing one prints a "ready:" line with both times
 * (seconds since the epoch), from which bench/rollout.sh measures how
 * fast a rollout could possibly go. */
static double started_at;
static int passed_once;

static double
wall_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
answer (int fd, int code, const char *body)
{
  answer_typed (fd, code, "text/plain", body);
}

static struct timespec started;
static double rereplicate_secs;

/* Ledgers still re-replicating: one for each second of --rereplicate-secs
 * left since the start. */
static int
underreplicated (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  double up = (double) (now.tv_sec - started.tv_sec) + (now.tv_nsec - started.tv_nsec) / 1e9;
  double left = rereplicate_secs - up;
  return left > 0 ? (int) left + 1 : 0;
}

static void
serve (int conn, int unhealthy, const char *version, const char *instance)
{
  char buf[2048];
  size_t have = 0;
  struct pollfd p = { conn, POLLIN, 0 };

  /* Read until the end of the request head (or 2 s pass). */
  while (have < sizeof buf - 1 && poll (&p, 1, 2000) > 0)
    {
      ssize_t n = read (conn, buf + have, sizeof buf - 1 - have);
      if (n <= 0)
        break;
      have += (size_t) n;
      buf[have] = '\0';
      if (strstr (buf, "\r\n\r\n") || strstr (buf, "\n\n"))
        break;
    }
  buf[have] = '\0';
  char path[512] = "/";
  sscanf (buf, "%*s %511s", path);
  char body[512];
  if (strcmp (path, "/health") == 0)
    {
      answer (conn, unhealthy ? 500 : 200, unhealthy ? "failing\n" : "ok\n");
      if (!unhealthy && !passed_once)
        {
          passed_once = 1;
          printf ("ready: version %s instance %s started %.6f healthy %.6f\n", version, instance,
                  started_at, wall_now ());
          fflush (stdout);
        }
    }
  else if (strcmp (path, "/ledgers") == 0)
    {
      snprintf (body, sizeof body, "{\"underreplicated\": %d}\n", underreplicated ());
      answer_typed (conn, 200, "application/json", body);
    }
  else if (strcmp (path, "/version") == 0)
    {
      snprintf (body, sizeof body, "%s\n", version);
      answer (conn, 200, body);
    }
  else if (strcmp (path, "/") == 0)
    {
      snprintf (body, sizeof body, "hello from version %s, instance %s, pid %ld\n", version,
                instance, (long) getpid ());
      answer (conn, 200, body);
    }
  else
    answer (conn, 404, "not found\n");
}

int
main (int argc, char **argv)
{
  started_at = wall_now ();
  int port = getenv ("PORT") ? atoi (getenv ("PORT")) : 8080;
  int unhealthy = 0;
  double crash_after = -1, start_delay = 0;
  const char *version = getenv ("STAGGER_VERSION") ? getenv ("STAGGER_VERSION") : "0";
  const char *instance = getenv ("STAGGER_INSTANCE") ? getenv ("STAGGER_INSTANCE") : "0";

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--port") == 0 && i + 1 < argc)
        port = atoi (argv[++i]);
      else if (strcmp (argv[i], "--unhealthy") == 0)
        unhealthy = 1;
      else if (strcmp (argv[i], "--crash-after") == 0 && i + 1 < argc)
        crash_after = atof (argv[++i]);
      else if (strcmp (argv[i], "--start-delay") == 0 && i + 1 < argc)
        start_delay = atof (argv[++i]);
      else if (strcmp (argv[i], "--rereplicate-secs") == 0 && i + 1 < argc)
        rereplicate_secs = atof (argv[++i]);
      else if (strcmp (argv[i], "--help") == 0)
        {
          usage (stdout);
          return 0;
        }
      else
        {
          fprintf (stderr, "stagger-example-server: unknown argument '%s'\n", argv[i]);
          usage (stderr);
          return 2;
        }
    }

  struct sigaction sa = { 0 };
  sa.sa_handler = on_term;
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);

  if (start_delay > 0)
    {
      struct timespec ts = { (time_t) start_delay, (long) ((start_delay - (time_t) start_delay) * 1e9) };
      nanosleep (&ts, NULL);
    }

  int fds[MAX_SOCKETS];
  int nfds = sockets_from_env (fds);
  const char *how = "handed over by Stagger";
  if (nfds == 0)
    {
      int fd = bind_port (port);
      how = "bound";
      if (fd < 0)
        {
          fprintf (stderr, "stagger-example-server: cannot listen on 127.0.0.1:%d: %s\n", port,
                   strerror (errno));
          return 1;
        }
      fds[nfds++] = fd;
    }
  /* Two versions poll a shared socket during a hot upgrade; the loser of
   * each accept must not block. */
  for (int i = 0; i < nfds; i++)
    fcntl (fds[i], F_SETFL, fcntl (fds[i], F_GETFL) | O_NONBLOCK);
  printf ("version %s, instance %s: serving on a socket %s (port %d)\n", version, instance, how, port);
  fflush (stdout);

  clock_gettime (CLOCK_MONOTONIC, &started);
  while (!stopping)
    {
      struct pollfd p[MAX_SOCKETS];
      for (int i = 0; i < nfds; i++)
        p[i] = (struct pollfd) { fds[i], POLLIN, 0 };
      int r = poll (p, (nfds_t) nfds, 200);
      if (crash_after >= 0)
        {
          struct timespec now;
          clock_gettime (CLOCK_MONOTONIC, &now);
          if ((double) (now.tv_sec - started.tv_sec) + (now.tv_nsec - started.tv_nsec) / 1e9 >= crash_after)
            {
              fprintf (stderr, "version %s: crashing as asked\n", version);
              return 1;
            }
        }
      if (r <= 0)
        continue;
      for (int i = 0; i < nfds; i++)
        {
          if (!(p[i].revents & POLLIN))
            continue;
          int conn = accept4 (fds[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (conn < 0)
            continue;
          serve (conn, unhealthy, version, instance);
          close (conn);
        }
    }
  printf ("version %s: stopping\n", version);
  return 0;
}
