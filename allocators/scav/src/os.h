// os.h - every system call the allocator makes (see os.cpp for the contract).
// Stateless: any thread may call any function at any time (start_thread excepted).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace scav::os {

constexpr size_t kPageSize = 4096;

// Contract: sizes and addresses are multiples of kPageSize; each call returns 0 or a
// positive errno, never touches errno, never allocates and takes no lock.
// Address space, read-write, lazily committed and not counted against overcommit.
int reserve(size_t size, size_t align, void** out);
// Memory to be used (huge blocks, heaps): the kernel's overcommit policy applies.
int map_fresh(size_t size, void** out);
// RLIMIT_AS, ~0 when unlimited.
uint64_t address_space_limit();
int unmap(void* p, size_t size);
int purge(void* p, size_t size, bool lazy);           // lazy: MADV_FREE, else MADV_DONTNEED
int huge_pages(void* p, size_t size, bool want);
// How many of the pages of [p, p+size) are present; vec has a byte per page.
int resident_pages(void* p, size_t size, unsigned char* vec, size_t* out);
// Make [p, p+size) (one aligned huge page's span, in a range that opted out of huge
// pages) one huge page now; the range stays opted out. EINVAL: the kernel has no
// MADV_COLLAPSE (before 6.1) or no THP; EAGAIN or ENOMEM: no huge page to be had.
int collapse_huge(void* p, size_t size);
int remap(void* p, size_t old_size, size_t new_size, void** out);

// Futex on a 32-bit word. wait returns 0 when woken, ETIMEDOUT, EAGAIN (value changed)
// or EINTR; timeout_ms < 0 waits without end.
int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ms);
void futex_wake(std::atomic<uint32_t>* word, int count);

// membarrier(2), private expedited: register once per process (and again in a fork
// child), then fence() runs a full memory barrier on every running thread of the
// process. Returns 0 or an errno (ENOSYS, EINVAL on old kernels).
int fence_register();
int fence_all_threads();

uint64_t now_ms();  // CLOCK_MONOTONIC
void yield();
void sleep_ms(unsigned ms);
void write_stderr(const char* s, size_t n);
[[noreturn]] void die();

// Start a thread with pthread_create, all signals blocked, named `name`; one at a
// time. It allocates and takes glibc's thread-list lock: see os.cpp.
struct Thread {
  pthread_t handle;
};
int start_thread(void (*fn)(void*), void* arg, const char* name, Thread* out);
// Wait until the thread has returned from fn and the kernel no longer counts it.
void join_thread(Thread t);

// unshare(2) and setns(2).
int unshare(int flags);
int setns(int fd, int nstype);

}  // namespace scav::os
