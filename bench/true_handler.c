/* The smallest exec handler: reads its payload from stdin to the end, then
 * exits 0. What one job costs through the exec path with no work in it:
 * a spawn, the pipes, a wait. */
#include <unistd.h>

int main(void) {
  char buf[4096];
  while (read(0, buf, sizeof buf) > 0) {
  }
  return 0;
}
