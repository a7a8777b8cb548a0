/* A program of the user's own that marks its phases with memharness/mark.h:
   64 MiB allocated and touched, then freed. Run without the harness, it
   prints "-1 -1" and exits 0. */
#include <stdio.h>
#include <stdlib.h>

#include "memharness/mark.h"

int main(void) {
  const size_t size = (size_t)64 << 20;
  char* p = malloc(size);
  if (!p) return 1;
  /* Every page written through a volatile pointer: the compiler may not drop
     the stores of a buffer it sees freed unread. */
  for (size_t i = 0; i < size; i += 4096) ((volatile char*)p)[i] = 1;
  int allocated = memharness_mark("allocated");
  free(p);
  int freed = memharness_mark("freed \"quoted\"");
  memharness_metric("marks_answered", (allocated == 0) + (freed == 0));
  printf("%d %d\n", allocated, freed);
  return 0;
}
