/* A statically linked program: no loader runs, so LD_PRELOAD cannot put an
   allocator under it; the harness must say so rather than report a result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char* p = malloc(1 << 20);
  if (!p) return 1;
  memset(p, 1, 1 << 20);
  printf("static %d\n", p[4096]);
  free(p);
  return 0;
}
