/*
 * nocma: run a program with cross-memory attach refused.
 *
 *   nocma PROGRAM [ARGS...]   install the filter below, then execvp PROGRAM
 *   nocma --check             install it and check that it works (exit 0),
 *                             or say why not and exit 77 (skip)
 *
 * The filter (seccomp, SECCOMP_SET_MODE_FILTER after PR_SET_NO_NEW_PRIVS)
 * makes process_vm_readv and process_vm_writev fail with EPERM, as a kernel
 * with ptrace restricted (Yama) or a container's seccomp profile would; every
 * other system call, and every call of another architecture's ABI, is
 * allowed. It applies to this process and everything it executes, nothing
 * else: no system-wide setting changes. Used as
 *   mpirun -np 2 nocma ./test_allgather ...
 * so that every rank runs under it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NOCMA_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NOCMA_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NOCMA_ARCH AUDIT_ARCH_I386
#else
#define NOCMA_ARCH 0 /* unknown: --check reports a skip */
#endif

#define SKIP 77

static int install(void)
{
#if NOCMA_ARCH == 0
    fprintf(stderr, "nocma: unsupported architecture\n");
    errno = ENOSYS;
    return -1;
#else
    struct sock_filter f[] = {
        /* another ABI (e.g. i386 on x86_64): its numbers differ, allow */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOCMA_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
#ifdef SYS_seccomp
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
#endif
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#endif
}

/* a read of this process's own memory: refused with EPERM under the filter */
static int check(void)
{
    static volatile unsigned long word = 0x6e6f636d61UL;
    unsigned long got = 0;
    struct iovec l = {&got, sizeof(got)}, r = {(void *)&word, sizeof(word)};
    errno = 0;
    ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    if (n == -1 && errno == EPERM)
        return 0;
    fprintf(stderr, "nocma: process_vm_readv still works under the filter (returned %zd, %s)\n", n, strerror(errno));
    return SKIP;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: nocma --check | nocma PROGRAM [ARGS...]\n");
        return 2;
    }
    if (install() != 0) {
        fprintf(stderr, "nocma: cannot install the seccomp filter: %s\n", strerror(errno));
        return SKIP;
    }
    if (strcmp(argv[1], "--check") == 0) {
        int rc = check();
        if (rc == 0)
            printf("nocma: process_vm_readv/process_vm_writev refused with EPERM\n");
        return rc;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "nocma: cannot execute %s: %s\n", argv[1], strerror(errno));
    return 127;
}
