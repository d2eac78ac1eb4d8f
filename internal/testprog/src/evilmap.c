/* A hostile target: it maps a copy of its own executable in directory
 * argv[1], deletes the copy and puts at its path what argv[2] names (fifo: a
 * FIFO, device: a symbolic link to a device that reads for ever, else a huge
 * sparse file); then it prints "ready" and spins. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
	char path[4096], buf[65536];
	snprintf(path, sizeof path, "%s/lib-%s.so", argv[1], argv[2]);
	int in = open("/proc/self/exe", O_RDONLY), out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0700);
	ssize_t n;
	off_t size = 0;
	if (in < 0 || out < 0) { perror("open"); return 1; }
	while ((n = read(in, buf, sizeof buf)) > 0) { if (write(out, buf, n) != n) return 1; size += n; }
	if (mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, out, 0) == MAP_FAILED) { perror("mmap"); return 1; }
	close(out);
	unlink(path);
	if (!strcmp(argv[2], "fifo")) {
		if (mkfifo(path, 0600) != 0) { perror("mkfifo"); return 1; }
	} else if (!strcmp(argv[2], "device")) {
		if (symlink("/dev/zero", path) != 0) { perror("symlink"); return 1; }
	} else {
		int fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)1 << 40) != 0) { perror("sparse"); return 1; }
		close(fd);
	}
	printf("ready\n");
	fflush(stdout);
	for (volatile unsigned long i = 0;; i++) {}
}
