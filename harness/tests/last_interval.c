/* A program whose peak comes in its last moments: it touches MIB mebibytes at
 * once and exits, so that no periodic sample sees the peak. With a second
 * argument it first does that many million steps of work taking SIGALRM at
 * 1 kHz, and prints how many it took (a traced program gets each signal through
 * its tracer: a fixed amount of work shows what that costs in wall time).
 *   last_interval MIB [MILLION_STEPS] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig) {
  (void)sig;
  alarms++;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const size_t bytes = (size_t)atol(argv[1]) << 20;
  if (argc > 2) {
    const unsigned long steps = strtoul(argv[2], NULL, 10) * 1000000UL;
    signal(SIGALRM, on_alarm);
    struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every_ms, NULL);
    volatile unsigned long spin = 0;
    while (spin < steps) spin++;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("alarms %d\n", (int)alarms);
  }
  char* p = malloc(bytes);
  if (!p) return 1;
  memset(p, 1, bytes);
  printf("touched %zu\n", bytes);
  return p[bytes / 2] == 1 ? 0 : 1;
}
