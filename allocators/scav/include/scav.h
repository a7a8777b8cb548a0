/* scav.h - public C API of the scav allocator (libscav.so / scav_static).
 * Every function here is thread-safe and may be called from any thread. The malloc
 * family itself is not declared here: scav exports the standard names.            */
#ifndef SCAV_H
#define SCAV_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of this library. */
const char* scav_version(void);

/* Return freed memory to the OS.
 * force=false: run what is due (a purge pass if a deadline has passed).
 * force=true:  give back every freed byte now: the calling thread's empty pages, the
 *              retired pages of all heaps, idle and abandoned heaps, the huge-span
 *              cache, then a forced purge of every arena. Waits for a pass that another
 *              thread (the scavenger) is running, and returns only after its own pass. */
void scav_collect(bool force);

/* Write a single-line JSON object of counters into buf (NUL-terminated when len > 0,
 * truncated to len-1 characters) and return the length it needs without the NUL, like
 * snprintf. Never allocates. Keys: see README.md. */
size_t scav_stats_json(char* buf, size_t len);

/* Idle hand-off for event-loop and pool threads. Call start right before blocking
 * (epoll_wait, a condition wait) and end right after. Between the two the thread must
 * not call malloc, free or any other function of this library. While the thread is
 * idle the scavenger may take its empty pages and collect frees other threads sent
 * to its pages. Cheap enough to call at kHz rates: it wakes nobody unless a new
 * purge has to be scheduled. */
void scav_thread_idle_start(void);
void scav_thread_idle_end(void);

#ifdef SCAV_PREFIXED
/* The sanitizer builds (SCAV_SANITIZE=address, thread or fuzzer) export the malloc
 * family under these names and replace nothing of the C library's. */
#ifdef __cplusplus
#define SCAV_NOTHROW noexcept
#else
#define SCAV_NOTHROW
#endif
void* scav_malloc(size_t n) SCAV_NOTHROW;
void scav_free(void* p) SCAV_NOTHROW;
void* scav_calloc(size_t count, size_t n) SCAV_NOTHROW;
void* scav_realloc(void* p, size_t n) SCAV_NOTHROW;
int scav_posix_memalign(void** out, size_t align, size_t n) SCAV_NOTHROW;
void* scav_aligned_alloc(size_t align, size_t n) SCAV_NOTHROW;
void* scav_memalign(size_t align, size_t n) SCAV_NOTHROW;
size_t scav_malloc_usable_size(void* p) SCAV_NOTHROW;
#endif

#ifdef __cplusplus
}
#endif

#endif /* SCAV_H */
