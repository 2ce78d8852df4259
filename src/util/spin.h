/* The floor of the house (src/util): one round of a polling loop. */
#ifndef KP_UTIL_SPIN_H
#define KP_UTIL_SPIN_H

/* tell the core we are spinning (x86 pause: ~100 cycles; arm64 yield) */
static inline void kp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
