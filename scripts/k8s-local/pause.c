/* The pod sandbox's process: waits for a signal and reaps what is left (no registry serves a pause image here). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void down(int s) { (void)s; exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction d = {.sa_handler = down};
  sigaction(SIGINT, &d, NULL);
  sigaction(SIGTERM, &d, NULL);
  struct sigaction r = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGCHLD, &r, NULL);
  for (;;) pause();
}
