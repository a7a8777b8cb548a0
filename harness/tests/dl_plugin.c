/* A library that dlopen_loop loads and unloads again and again: it allocates
   when loaded (freed when unloaded) and in plugin_work, whose block outlives
   the library (its call stack then names code that is no longer mapped). */
#include <stdlib.h>
#include <string.h>

static void* held[16];

__attribute__((constructor)) static void plugin_load(void) {
  for (int i = 0; i < 16; ++i) held[i] = malloc(1000 + 100 * (size_t)i);
}

__attribute__((destructor)) static void plugin_unload(void) {
  for (int i = 0; i < 16; ++i) free(held[i]);
}

__attribute__((visibility("default"))) void* plugin_work(size_t round) {
  void* scratch[8];
  for (int i = 0; i < 8; ++i) scratch[i] = malloc(64 + round % 512);
  for (int i = 0; i < 8; ++i) free(scratch[i]);
  void* kept = malloc(4096);
  if (kept) memset(kept, (int)round, 4096);
  return kept;
}
