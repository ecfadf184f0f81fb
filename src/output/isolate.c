/* isolate.c: a child process with a time and memory limit for parsing untrusted files
 * (isolate.h says why). */
#include "output/isolate.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it */
#if defined(__SANITIZE_ADDRESS__)
#define ISO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ISO_ASAN 1
#endif
#endif
#ifndef ISO_ASAN
#define ISO_ASAN 0
#endif

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the address space this process uses now [bytes] (Linux /proc/self/statm), 0 if unknown */
static size_t address_space_now(void) {
  unsigned long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) {
    return 0;
  }
  if (fscanf(f, "%lu", &pages) != 1) {
    pages = 0;
  }
  fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? (size_t)pages * (size_t)page : 0;
}

/* the limits the child sets on itself before it touches the file (the address space in use
 * was measured before the fork) */
static void limit_child(double seconds, size_t as_limit) {
  struct rlimit rl;
  /* CPU time: SIGXCPU at the limit, SIGKILL a second later; also if the parent is gone */
  rl.rlim_cur = (rlim_t)ceil(seconds);
  rl.rlim_max = rl.rlim_cur + 1;
  setrlimit(RLIMIT_CPU, &rl);
  /* no core file from a crash, no file written */
  rl.rlim_cur = rl.rlim_max = 0;
  setrlimit(RLIMIT_CORE, &rl);
  setrlimit(RLIMIT_FSIZE, &rl);
  if (as_limit > 0) {
    rl.rlim_cur = rl.rlim_max = (rlim_t)as_limit;
    setrlimit(RLIMIT_AS, &rl);
  }
  /* a wall-time backstop for a child whose parent died */
  alarm((unsigned)ceil(seconds) + 2);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGALRM, SIG_DFL);
  signal(SIGXCPU, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

int iso_start(isoChild *c, const mbsInspectLimits *lim, void (*work)(void *arg, int fd), void *arg,
              char *why, size_t nwhy) {
  double seconds = lim && lim->seconds > 0 ? lim->seconds : MBS_INSPECT_SECONDS;
  double memory_mb = lim && lim->memory_mb > 0 ? lim->memory_mb : MBS_INSPECT_MEMORY_MB;
  int fds[2];
  c->pid = -1;
  c->fd = -1;
  c->seconds = seconds;

  size_t as_limit = 0;
  if (!ISO_ASAN) {
    size_t now = address_space_now();
    double extra = memory_mb * 1048576.0;
    if (now > 0 && extra < 1e15) {
      as_limit = now + (size_t)extra;
    }
  }
  if (pipe(fds) != 0) {
    snprintf(why, nwhy, "cannot create a pipe to the process that reads it (%s)", strerror(errno));
    return -1;
  }
  /* what is buffered goes out once, from this process (the child leaves with _exit) */
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, nwhy, "cannot start the process that reads it (%s)", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    limit_child(seconds, as_limit);
    work(arg, fds[1]);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  c->pid = pid;
  c->fd = fds[0];
  c->deadline = now_seconds() + seconds;
  return 0;
}

int iso_read(isoChild *c, void *buf, size_t n) {
  unsigned char *p = buf;
  while (n > 0) {
    if (c->fd < 0) {
      return -1;
    }
    double left = c->deadline - now_seconds();
    if (left <= 0.0) {
      return -1;
    }
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN, .revents = 0};
    int rc = poll(&pfd, 1, (int)fmin(ceil(left * 1000.0), 60000.0));
    if (rc < 0 && errno == EINTR) {
      continue;
    }
    if (rc < 0) {
      return -1;
    }
    if (rc == 0) {
      continue;
    }
    ssize_t got = read(c->fd, p, n);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
      continue;
    }
    if (got <= 0) {
      return -1;
    }
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

int iso_finish(isoChild *c, int kill_it, char *why, size_t nwhy) {
  int rc = -1, status = 0, timed_out = 0;
  if (c->pid < 0) {
    snprintf(why, nwhy, "no process read it");
    return -1;
  }
  /* a child that is done closes the pipe: wait for that (or the deadline) */
  while (!kill_it && c->fd >= 0) {
    unsigned char b;
    if (iso_read(c, &b, 1) == 0) {
      /* more than the answer: the child is not what it should be */
      kill_it = 1;
    } else {
      break;
    }
  }
  if (now_seconds() >= c->deadline) {
    pid_t w = waitpid(c->pid, &status, WNOHANG);
    if (w == 0) {
      timed_out = 1;
      kill_it = 1;
    } else if (w == c->pid) {
      c->pid = -1;
    }
  }
  if (c->pid >= 0 && kill_it) {
    kill(c->pid, SIGKILL);
  }
  while (c->pid >= 0) {
    pid_t w = waitpid(c->pid, &status, 0);
    if (w == c->pid || (w < 0 && errno != EINTR)) {
      break;
    }
  }
  if (c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
  if (timed_out) {
    snprintf(why, nwhy,
             "reading it did not finish within %g s (a damaged file that makes "
             "HDF5 loop?)",
             c->seconds);
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    snprintf(why, nwhy,
             "reading it took more than %g s of CPU time (a damaged file that "
             "makes HDF5 loop?)",
             c->seconds);
  } else if (WIFSIGNALED(status) && !kill_it) {
    snprintf(why, nwhy, "reading it crashed the process that read it (signal %d, %s)",
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    snprintf(why, nwhy, "the process that read it failed (exit status %d)",
             WEXITSTATUS(status));
  } else if (kill_it) {
    snprintf(why, nwhy, "the process that read it gave a malformed answer");
  } else {
    rc = 0;
  }
  c->pid = -1;
  return rc;
}

int iso_write(int fd, const void *buf, size_t n) {
  const unsigned char *p = buf;
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return -1;
    }
    p += put;
    n -= (size_t)put;
  }
  return 0;
}
