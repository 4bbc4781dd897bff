/* What writing fresh memory costs on this machine, against memory already touched: the
 * share of `clear_page_erms` in the profiles of docs/performance.md ("Newton's method
 * against the fixed point").
 *
 *   cc -O2 perf/first_touch.c -o first_touch && ./first_touch [GIB]
 *
 * Maps GIB GiB (default 2) of anonymous memory, asks for transparent huge pages
 * (MADV_HUGEPAGE), and times three memsets: the first (every page faulted in and zeroed by
 * the kernel), the second (pages in place), and the first on a new mapping after the old
 * one is unmapped (pages the kernel has handed out before). Prints GB/s for each. Run it
 * a few times: on a virtual machine the first run can be slow where the host backs the
 * guest's memory only when it is first written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char* map(size_t n) {
  void* p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("first_touch: mmap");
    exit(1);
  }
  madvise(p, n, MADV_HUGEPAGE);
  return (char*)p;
}

int main(int argc, char** argv) {
  const double gib = argc > 1 ? atof(argv[1]) : 2.0;
  if (!(gib > 0.0 && gib <= 64.0)) {
    fprintf(stderr, "first_touch: GIB must be in (0, 64]\n");
    return 2;
  }
  const size_t n = (size_t)(gib * 1073741824.0);
  char* p = map(n);
  const double t0 = now();
  memset(p, 1, n);
  const double t1 = now();
  memset(p, 2, n);
  const double t2 = now();
  munmap(p, n);
  char* q = map(n);
  const double t3 = now();
  memset(q, 3, n);
  const double t4 = now();
  munmap(q, n);
  printf("%.1f GiB: first touch %.2f GB/s, touched %.2f GB/s, new mapping %.2f GB/s\n", gib,
         (double)n / 1e9 / (t1 - t0), (double)n / 1e9 / (t2 - t1), (double)n / 1e9 / (t4 - t3));
  return 0;
}
