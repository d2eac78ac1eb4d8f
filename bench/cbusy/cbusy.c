/* The C workload of `harness overhead -workload c`: N busy threads (argv[1],
 * default 2) for a number of seconds (argv[2], default 5), built with frame
 * pointers and linked to the ordinary dynamic libc, so that its stacks pass
 * through libc code without them (qsort, start_thread), as most C programs'
 * do. Each work unit is the same fixed work (a checksum of a 4 KiB block in
 * its own code, then 2,048 records sorted by libc's qsort with a callback),
 * so units per second compare from run to run. When it ends it prints the
 * lines bench/demo prints, which the harness reads: its throughput, the
 * share of their time the workers were on a CPU, the parent's (a
 * profiler's) CPU while they ran and its own CPU in all. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static unsigned long units;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double sum_wall, sum_user, sum_sys;
volatile unsigned long sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

__attribute__((noinline)) unsigned hash_blocks(unsigned char *buf, int rounds) {
  unsigned h = 0;
  for (int i = 0; i < rounds; i++) {
    unsigned c = ~0u;
    for (int j = 0; j < 4096; j++) {
      c ^= buf[j];
      for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
    }
    h ^= ~c;
    buf[i % 4096] ^= (unsigned char)h;
  }
  return h;
}

__attribute__((noinline)) unsigned compute_checksums(unsigned char *buf) {
  return hash_blocks(buf, 2);
}

__attribute__((noinline)) int compare_records(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_records(int *recs, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    recs[i] = (int)seed;
  }
  qsort(recs, n, sizeof recs[0], compare_records);
}

__attribute__((noinline)) void prepare_report(int *recs, int n, unsigned seed) {
  sort_records(recs, n, seed);
  sink += recs[n / 2];
}

static void *worker(void *arg) {
  (void)arg;
  static __thread unsigned char buf[4096];
  static __thread int recs[2048];
  struct rusage r0, r1;
  double start = now();
  unsigned long n = 0;
  getrusage(RUSAGE_THREAD, &r0);
  for (unsigned seed = 1; !stop; seed++) {
    sink += compute_checksums(buf);
    prepare_report(recs, 2048, seed);
    n++;
  }
  getrusage(RUSAGE_THREAD, &r1);
  double wall = now() - start;
  pthread_mutex_lock(&mu);
  units += n;
  sum_wall += wall;
  sum_user += tv(r1.ru_utime) - tv(r0.ru_utime);
  sum_sys += tv(r1.ru_stime) - tv(r0.ru_stime);
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* parent_cpu returns the CPU seconds the parent process has used so far,
 * summed over its threads from the scheduler's accounting, or -1. */
static double parent_cpu(void) {
  char path[96], line[256];
  double sum = 0;
  snprintf(path, sizeof path, "/proc/%d/task", (int)getppid());
  DIR *d = opendir(path);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char stat[96 + 300];
    snprintf(stat, sizeof stat, "%s/%s/schedstat", path, e->d_name);
    FILE *f = fopen(stat, "r");
    if (!f) continue; /* a thread that ended meanwhile */
    if (fgets(line, sizeof line, f)) sum += strtoull(line, NULL, 10) / 1e9;
    fclose(f);
  }
  closedir(d);
  return sum;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double dur = argc > 2 ? atof(argv[2]) : 5;
  if (threads < 1 || threads > 256 || dur <= 0) {
    fprintf(stderr, "usage: cbusy [THREADS] [SECONDS]\n");
    return 2;
  }
  pthread_t th[256];
  double p0 = parent_cpu(), start = now();
  for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker, NULL);
  printf("ready\n");
  fflush(stdout);
  struct timespec ts = {(time_t)dur, (long)((dur - (time_t)dur) * 1e9)};
  nanosleep(&ts, NULL);
  stop = 1;
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  double p1 = parent_cpu(), el = now() - start;
  printf("throughput %.1f units/s over %.2fs with %d threads\n", units / el, el, threads);
  printf("workers ran %.3f%% of their time (user %.3f%%, system %.3f%%)\n",
         100 * (sum_user + sum_sys) / sum_wall, 100 * sum_user / sum_wall, 100 * sum_sys / sum_wall);
  if (p0 >= 0 && p1 >= 0) printf("parent CPU while the workers ran %.3fms\n", (p1 - p0) * 1000);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("process CPU %.3fs\n", tv(ru.ru_utime) + tv(ru.ru_stime));
  return 0;
}
