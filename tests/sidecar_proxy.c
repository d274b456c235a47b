/* sidecar_proxy.c: stg-test-proxy, the Envoy-like sidecar of the pod tests
 * (fleet_sidecar_test, bench/sidecars.sh): a TCP relay from its listening
 * sockets to the application beside it in the pod, on 127.0.0.1.
 *
 *   stg-test-proxy UPSTREAM_PORT [PORT]
 *
 * Its sockets come by socket activation (LISTEN_FDS, LISTEN_PID,
 * LISTEN_FDNAMES: "probe" is served the same way) or, without them, it
 * binds PORT itself. Each connection is relayed by a child process to
 * 127.0.0.1:UPSTREAM_PORT. On SIGTERM it closes its listening sockets
 * (connections not yet accepted stay queued for whoever else holds them),
 * lets the connections it took finish, and exits 0: that is all it takes
 * to be hot-upgraded by the anchor's socket hand-over. Plain C, libc only,
 * linked statically into the busybox-static test image. Test programs
 * only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LISTEN 8

static volatile sig_atomic_t stopping;

static void
on_term (int sig)
{
  (void) sig;
  stopping = 1;
}

/* Copies what arrives on either side to the other until both are done. */
static int
relay (int client, int upstream_port)
{
  struct sockaddr_in a;
  char buf[16384];
  int up = socket (AF_INET, SOCK_STREAM, 0);
  int open_in = 1, open_out = 1;

  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons ((unsigned short) upstream_port);
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (up < 0 || connect (up, (struct sockaddr *) &a, sizeof a) != 0)
    {
      fprintf (stderr, "stg-test-proxy: upstream 127.0.0.1:%d: %s\n", upstream_port,
               strerror (errno));
      return 1;
    }
  while (open_in || open_out)
    {
      struct pollfd p[2] = { { open_in ? client : -1, POLLIN, 0 },
                             { open_out ? up : -1, POLLIN, 0 } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return 1;
        }
      for (int i = 0; i < 2; i++)
        {
          if (p[i].revents == 0)
            continue;
          int from = i == 0 ? client : up, to = i == 0 ? up : client;
          ssize_t n = read (from, buf, sizeof buf);
          if (n <= 0)
            {
              shutdown (to, SHUT_WR);
              if (i == 0)
                open_in = 0;
              else
                open_out = 0;
              continue;
            }
          for (ssize_t done = 0; done < n;)
            {
              ssize_t w = write (to, buf + done, (size_t) (n - done));
              if (w <= 0)
                return 1;
              done += w;
            }
        }
    }
  return 0;
}

/* The listening sockets: those handed over, else one bound on @port. */
static int
listeners (int *fds, const char *port)
{
  const char *n = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  int count = 0, one = 1;

  if (n != NULL && pid != NULL && atol (pid) == (long) getpid ())
    {
      for (int i = 0; i < atoi (n) && count < MAX_LISTEN; i++)
        fds[count++] = 3 + i;
      return count;
    }
  if (port == NULL)
    return 0;
  struct sockaddr_in a;
  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons ((unsigned short) atoi (port));
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) != 0 || listen (fd, 1024) != 0)
    {
      fprintf (stderr, "stg-test-proxy: port %s: %s\n", port, strerror (errno));
      exit (1);
    }
  fds[0] = fd;
  return 1;
}

int
main (int argc, char **argv)
{
  int fds[MAX_LISTEN];
  struct sigaction sa;

  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: stg-test-proxy UPSTREAM_PORT [PORT]\n");
      return 64;
    }
  int upstream = atoi (argv[1]);
  int count = listeners (fds, argc > 2 ? argv[2] : NULL);
  if (count == 0)
    {
      fprintf (stderr, "stg-test-proxy: no listening socket (LISTEN_FDS or PORT)\n");
      return 1;
    }
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  fprintf (stderr, "stg-test-proxy: version %s serving %d sockets, upstream %d\n",
           getenv ("STAGGER_VERSION") ? getenv ("STAGGER_VERSION") : "?", count, upstream);
  while (!stopping)
    {
      struct pollfd p[MAX_LISTEN];
      for (int i = 0; i < count; i++)
        p[i] = (struct pollfd){ fds[i], POLLIN, 0 };
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      if (poll (p, (nfds_t) count, 1000) <= 0)
        continue;
      for (int i = 0; i < count && !stopping; i++)
        {
          if (!(p[i].revents & POLLIN))
            continue;
          /* Blocks when another holder of the socket took the connection
           * first, until the next one or a signal. */
          int conn = accept (fds[i], NULL, NULL);
          if (conn < 0)
            continue;
          pid_t child = fork ();
          if (child == 0)
            {
              for (int j = 0; j < count; j++)
                close (fds[j]);
              _exit (relay (conn, upstream));
            }
          close (conn);
        }
    }
  for (int i = 0; i < count; i++)
    close (fds[i]);
  while (wait (NULL) > 0 || errno == EINTR)
    ;
  return 0;
}
