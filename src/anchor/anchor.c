/* anchor.c: stagger-anchor, the small program of a fleet pod (staggerd(8),
 * Pods): plain C and libc only, linked statically, so it runs in any
 * image, or as the only file of its own (the anchor image staggerd
 * imports into each host).
 *
 *   stagger-anchor hold DIR [NAME=PORT]...
 *       The anchor container's process: it holds the pod's network
 *       namespace, binds a listening TCP socket for each NAME=PORT, copies
 *       itself to DIR/stagger-anchor (DIR is the pod's shared volume) and
 *       hands the sockets out on the Unix socket DIR/anchor.sock: a client
 *       writes the names it wants ("proxy,admin\n"), and gets the sockets
 *       in one SCM_RIGHTS message with "OK proxy:admin\n" (or "ERR why\n").
 *   stagger-anchor exec DIR NAMES [--probe PORT] -- COMMAND [ARG]...
 *       Takes the sockets NAMES (comma-separated) from DIR/anchor.sock,
 *       binds a probe socket on PORT when asked (named "probe"), puts them
 *       at descriptors 3, 4, ... and runs COMMAND with LISTEN_FDS,
 *       LISTEN_PID and LISTEN_FDNAMES (systemd's socket activation), so a
 *       program that takes its sockets that way needs no code of its own
 *       to hand them from one version to the next.
 *   stagger-anchor sleep
 *       The empty slot of a hot sidecar: does nothing until SIGTERM.
 *
 * Every mode ends with status 0 on SIGTERM or SIGINT. A failure ends it
 * with one line on standard error and status 2, or 3 when hold cannot
 * listen on a port (another process has it): staggerd shows that line.
 * One thread; no other layer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_SOCKETS 32
#define NAME_MAX_LEN 63
#define REQUEST_MAX 2048
#define SOCKET_FILE "anchor.sock"
#define COPY_FILE "stagger-anchor"
/* hold's status when a port is taken. */
#define EXIT_PORT 3
/* How long exec waits for the anchor's socket to appear. */
#define CONNECT_WAIT_MS 30000

typedef struct
{
  char name[NAME_MAX_LEN + 1];
  int port;
  int fd;
} Listener;

static volatile sig_atomic_t stopping;

static void
on_stop (int sig)
{
  (void) sig;
  stopping = 1;
}

static void fail (int status, const char *format, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));

/* Says why on standard error, one line (what staggerd shows of an
 * anchor that ended), and exits with @status. */
static void
fail (int status, const char *format, ...)
{
  va_list ap;

  fputs ("stagger-anchor: ", stderr);
  va_start (ap, format);
  vfprintf (stderr, format, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (status);
}

/* SIGTERM and SIGINT end the program (status 0); no SA_RESTART, so a
 * blocking call returns EINTR. */
static void
catch_stop (void)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
}

static int
valid_name (const char *name, size_t len)
{
  if (len == 0 || len > NAME_MAX_LEN)
    return 0;
  for (size_t i = 0; i < len; i++)
    if (!(name[i] >= 'a' && name[i] <= 'z') && !(name[i] >= 'A' && name[i] <= 'Z') &&
        !(name[i] >= '0' && name[i] <= '9') && strchr ("_-.", name[i]) == NULL)
      return 0;
  return 1;
}

/* A listening TCP socket on every address, port @port. */
static int
listen_on (int port)
{
  int fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1, zero = 0;
  struct sockaddr_in6 a6;
  struct sockaddr_in a4;

  if (fd >= 0)
    {
      /* Both families where the kernel has IPv6; else IPv4 only. */
      setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      memset (&a6, 0, sizeof a6);
      a6.sin6_family = AF_INET6;
      a6.sin6_port = htons ((unsigned short) port);
      a6.sin6_addr = in6addr_any;
      if (bind (fd, (struct sockaddr *) &a6, sizeof a6) == 0 && listen (fd, 4096) == 0)
        return fd;
      close (fd);
    }
  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  memset (&a4, 0, sizeof a4);
  a4.sin_family = AF_INET;
  a4.sin_port = htons ((unsigned short) port);
  a4.sin_addr.s_addr = htonl (INADDR_ANY);
  if (bind (fd, (struct sockaddr *) &a4, sizeof a4) != 0 || listen (fd, 4096) != 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

/* DIR/FILE, or death when it does not fit. */
static void
path_in (char *out, size_t size, const char *dir, const char *file)
{
  if ((size_t) snprintf (out, size, "%s/%s", dir, file) >= size)
    fail (2, "%s/%s: path too long", dir, file);
}

/* Copies this program to DIR/stagger-anchor (through a temporary name, so
 * no one runs a half-written copy). */
static void
copy_self (const char *dir)
{
  char tmp[4096], dest[4096];
  char buf[65536];
  ssize_t n;

  path_in (tmp, sizeof tmp, dir, "." COPY_FILE ".tmp");
  path_in (dest, sizeof dest, dir, COPY_FILE);
  int in = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  int out = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (in < 0 || out < 0)
    fail (2, "cannot copy itself to %s: %s", dest, strerror (errno));
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (write (out, buf, (size_t) n) != n)
      fail (2, "cannot write %s: %s", tmp, strerror (errno));
  if (n < 0 || close (out) != 0 || chmod (tmp, 0555) != 0 || rename (tmp, dest) != 0)
    fail (2, "cannot copy itself to %s: %s", dest, strerror (errno));
  close (in);
}

/* Sends @count descriptors and the line @text on @conn. */
static int
send_fds (int conn, const int *fds, int count, const char *text)
{
  struct msghdr msg;
  struct iovec iov;
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * MAX_SOCKETS)];
    struct cmsghdr align;
  } control;

  memset (&msg, 0, sizeof msg);
  iov.iov_base = (void *) text;
  iov.iov_len = strlen (text);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (count > 0)
    {
      memset (&control, 0, sizeof control);
      msg.msg_control = control.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * (size_t) count);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * (size_t) count);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * (size_t) count);
    }
  return sendmsg (conn, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Answers one request on @conn from @held. */
static void
serve (int conn, const Listener *held, int n_held)
{
  char request[REQUEST_MAX + 1], reply[REQUEST_MAX + 64];
  int fds[MAX_SOCKETS], count = 0;
  size_t got = 0;
  ssize_t n;

  while (got < REQUEST_MAX && (n = read (conn, request + got, REQUEST_MAX - got)) > 0)
    {
      got += (size_t) n;
      if (memchr (request, '\n', got) != NULL)
        break;
    }
  request[got] = '\0';
  char *end = strchr (request, '\n');
  if (end == NULL)
    {
      send_fds (conn, NULL, 0, "ERR the request is one line of port names\n");
      return;
    }
  *end = '\0';
  strcpy (reply, "OK ");
  for (char *name = request, *next; *name != '\0' && count < MAX_SOCKETS; name = next)
    {
      next = name + strcspn (name, ",");
      if (*next == ',')
        *next++ = '\0';
      int i = 0;
      while (i < n_held && strcmp (held[i].name, name) != 0)
        i++;
      if (i == n_held)
        {
          snprintf (reply, sizeof reply, "ERR the anchor holds no socket named \"%.64s\"\n", name);
          send_fds (conn, NULL, 0, reply);
          return;
        }
      fds[count++] = held[i].fd;
      strcat (reply, count > 1 ? ":" : "");
      strcat (reply, name);
    }
  strcat (reply, "\n");
  send_fds (conn, fds, count, reply);
}

static int
cmd_hold (int argc, char **argv)
{
  Listener held[MAX_SOCKETS];
  int n_held = 0;
  struct sockaddr_un addr;

  if (argc < 1)
    fail (2, "usage: stagger-anchor hold DIR [NAME=PORT]...");
  const char *dir = argv[0];
  for (int i = 1; i < argc; i++)
    {
      const char *eq = strchr (argv[i], '=');
      char *end = NULL;
      long port = eq ? strtol (eq + 1, &end, 10) : 0;
      if (eq == NULL || !valid_name (argv[i], (size_t) (eq - argv[i])) || end == eq + 1 ||
          *end != '\0' || port < 1 || port > 65535 || n_held == MAX_SOCKETS)
        fail (2, "\"%s\": give each socket as NAME=PORT (at most %d)", argv[i], MAX_SOCKETS);
      memcpy (held[n_held].name, argv[i], (size_t) (eq - argv[i]));
      held[n_held].name[eq - argv[i]] = '\0';
      held[n_held].port = (int) port;
      held[n_held].fd = listen_on ((int) port);
      if (held[n_held].fd < 0)
        fail (EXIT_PORT, "cannot listen on port %ld (%s): %s", port, held[n_held].name,
              strerror (errno));
      n_held++;
    }
  catch_stop ();
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    fail (2, "cannot make %s: %s", dir, strerror (errno));
  chmod (dir, 0755);
  copy_self (dir);
  memset (&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  path_in (addr.sun_path, sizeof addr.sun_path, dir, SOCKET_FILE);
  unlink (addr.sun_path);
  int server = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0 || bind (server, (struct sockaddr *) &addr, sizeof addr) != 0 ||
      chmod (addr.sun_path, 0666) != 0 || listen (server, 64) != 0)
    fail (2, "cannot serve %s: %s", addr.sun_path, strerror (errno));
  while (!stopping)
    {
      int conn = accept4 (server, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        continue; /* EINTR: a signal; anything else is tried again */
      struct timeval t = { 5, 0 };
      setsockopt (conn, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
      serve (conn, held, n_held);
      close (conn);
    }
  unlink (addr.sun_path);
  return 0;
}

static int
cmd_sleep (void)
{
  catch_stop ();
  while (!stopping)
    pause ();
  return 0;
}

/* Connects to the anchor's socket in @dir, waiting for it to appear. */
static int
connect_anchor (const char *dir)
{
  struct sockaddr_un addr;
  struct timespec pause_time = { 0, 50 * 1000 * 1000 };

  memset (&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  path_in (addr.sun_path, sizeof addr.sun_path, dir, SOCKET_FILE);
  for (int waited = 0;; waited += 50)
    {
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        fail (2, "socket: %s", strerror (errno));
      if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0)
        return fd;
      int e = errno;
      close (fd);
      if ((e != ENOENT && e != ECONNREFUSED) || waited >= CONNECT_WAIT_MS)
        fail (2, "cannot reach the anchor at %s: %s", addr.sun_path, strerror (e));
      nanosleep (&pause_time, NULL);
    }
}

/* Asks the anchor for @names; fills @fds and the reply's names (after
 * "OK "), returns how many came. */
static int
take_sockets (const char *dir, const char *names, int *fds, char *got_names, size_t size)
{
  char line[REQUEST_MAX + 64];
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * MAX_SOCKETS)];
    struct cmsghdr align;
  } control;
  struct msghdr msg;
  struct iovec iov;
  int conn = connect_anchor (dir), count = 0;

  if ((size_t) snprintf (line, sizeof line, "%s\n", names) >= sizeof line ||
      write (conn, line, strlen (line)) < 0)
    fail (2, "cannot ask the anchor for %s: %s", names, strerror (errno));
  memset (&msg, 0, sizeof msg);
  memset (line, 0, sizeof line);
  iov.iov_base = line;
  iov.iov_len = sizeof line - 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  ssize_t n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    fail (2, "the anchor did not answer: %s", n < 0 ? strerror (errno) : "connection closed");
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        int k = (int) ((c->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        for (int i = 0; i < k && count < MAX_SOCKETS; i++)
          memcpy (&fds[count++], CMSG_DATA (c) + sizeof (int) * (size_t) i, sizeof (int));
      }
  close (conn);
  line[strcspn (line, "\n")] = '\0';
  if (strncmp (line, "OK ", 3) != 0)
    fail (2, "the anchor refused: %s", strncmp (line, "ERR ", 4) == 0 ? line + 4 : line);
  if ((size_t) snprintf (got_names, size, "%s", line + 3) >= size)
    fail (2, "the anchor's answer is too long");
  return count;
}

static int
cmd_exec (int argc, char **argv)
{
  int fds[MAX_SOCKETS + 1], count = 0, probe = 0, first = 2;
  char names[REQUEST_MAX + 16] = "";
  char env[64];

  if (argc >= 4 && strcmp (argv[2], "--probe") == 0)
    {
      probe = atoi (argv[3]);
      first = 4;
    }
  if (argc < first + 2 || strcmp (argv[first], "--") != 0 || (first == 4 && probe <= 0))
    fail (2, "usage: stagger-anchor exec DIR NAMES [--probe PORT] -- COMMAND [ARG]...");
  if (argv[1][0] != '\0')
    count = take_sockets (argv[0], argv[1], fds, names, sizeof names - 8);
  if (probe > 0)
    {
      fds[count] = listen_on (probe);
      if (fds[count] < 0)
        fail (2, "cannot listen on the probe port %d: %s", probe, strerror (errno));
      strcat (names, count > 0 ? ":probe" : "probe");
      count++;
    }
  /* Out of the way first, then down to 3, 4, ... without their CLOEXEC. */
  for (int i = 0; i < count; i++)
    {
      int high = fcntl (fds[i], F_DUPFD_CLOEXEC, 3 + MAX_SOCKETS + 1);
      if (high < 0)
        fail (2, "dup: %s", strerror (errno));
      close (fds[i]);
      fds[i] = high;
    }
  for (int i = 0; i < count; i++)
    {
      if (dup2 (fds[i], 3 + i) < 0)
        fail (2, "dup2: %s", strerror (errno));
      close (fds[i]);
    }
  snprintf (env, sizeof env, "%d", count);
  setenv ("LISTEN_FDS", env, 1);
  snprintf (env, sizeof env, "%ld", (long) getpid ());
  setenv ("LISTEN_PID", env, 1);
  setenv ("LISTEN_FDNAMES", names, 1);
  execvp (argv[first + 1], argv + first + 1);
  fail (2, "cannot run %s: %s", argv[first + 1], strerror (errno));
  return 2;
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "hold") == 0)
    return cmd_hold (argc - 2, argv + 2);
  if (argc >= 2 && strcmp (argv[1], "exec") == 0)
    return cmd_exec (argc - 2, argv + 2);
  if (argc == 2 && strcmp (argv[1], "sleep") == 0)
    return cmd_sleep ();
  fprintf (stderr, "usage: stagger-anchor hold DIR [NAME=PORT]...\n"
                   "       stagger-anchor exec DIR NAMES [--probe PORT] -- COMMAND [ARG]...\n"
                   "       stagger-anchor sleep\n");
  return 64;
}
