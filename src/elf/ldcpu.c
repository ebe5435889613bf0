/* What this CPU supports, as glibc's loader judges it for its subdirectories: the x86-64 levels
 * of the psABI (glibc-hwcaps/x86-64-v2..v4, with the operating system's support for the AVX and
 * AVX-512 state), Intel's "haswell" platform of glibc 2.26-2.36, and aarch64's LSE atomics. */
#include "sc_ldtarget.h"

#if defined(__x86_64__)
#include <cpuid.h>

/* CPUID bits (leaf 1 ECX, leaf 0x80000001 ECX, leaf 7 EBX), named here so gcc and clang agree. */
enum {
    L1_SSE3 = 1u << 0,
    L1_SSSE3 = 1u << 9,
    L1_FMA = 1u << 12,
    L1_CX16 = 1u << 13,
    L1_SSE41 = 1u << 19,
    L1_SSE42 = 1u << 20,
    L1_MOVBE = 1u << 22,
    L1_POPCNT = 1u << 23,
    L1_OSXSAVE = 1u << 27,
    L1_AVX = 1u << 28,
    L1_F16C = 1u << 29,
    X1_LAHF = 1u << 0,
    X1_LZCNT = 1u << 5,
    L7_BMI1 = 1u << 3,
    L7_AVX2 = 1u << 5,
    L7_BMI2 = 1u << 8,
    L7_AVX512F = 1u << 16,
    L7_AVX512DQ = 1u << 17,
    L7_AVX512CD = 1u << 28,
    L7_AVX512BW = 1u << 30,
    L7_AVX512VL = 1u << 31,
};

static bool all(unsigned have, unsigned want)
{
    return (have & want) == want;
}

/* The state components the operating system saves (XCR0): AVX needs 2 and 4, AVX-512 0xe0. */
static unsigned long long xcr0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void detect(sc_ld_cpu *c)
{
    unsigned a, b, l1 = 0, x1 = 0, l7 = 0, vendor[3] = {0};
    if (!__get_cpuid(0, &a, &vendor[0], &vendor[2], &vendor[1]) || !__get_cpuid(1, &a, &b, &l1, &a))
        return;
    if (__get_cpuid(0x80000001, &a, &b, &x1, &a) == 0)
        x1 = 0;
    if (__get_cpuid_count(7, 0, &a, &l7, &b, &b) == 0)
        l7 = 0;
    unsigned long long xcr = all(l1, L1_OSXSAVE) ? xcr0() : 0;
    bool avx_state = (xcr & 0x6) == 0x6, avx512_state = avx_state && (xcr & 0xe0) == 0xe0;
    bool v2 =
        all(l1, L1_SSE3 | L1_SSSE3 | L1_SSE41 | L1_SSE42 | L1_POPCNT | L1_CX16) && all(x1, X1_LAHF);
    bool v3 = v2 && avx_state && all(l1, L1_AVX | L1_FMA | L1_F16C | L1_MOVBE) &&
              all(l7, L7_AVX2 | L7_BMI1 | L7_BMI2) && all(x1, X1_LZCNT);
    bool v4 = v3 && avx512_state &&
              all(l7, L7_AVX512F | L7_AVX512DQ | L7_AVX512CD | L7_AVX512BW | L7_AVX512VL);
    c->x86_level = v4 ? 4 : v3 ? 3 : v2 ? 2 : 1;
    bool intel = vendor[0] == 0x756e6547 && vendor[1] == 0x49656e69 && vendor[2] == 0x6c65746e;
    c->haswell = intel && avx_state && all(l7, L7_AVX2 | L7_BMI1 | L7_BMI2) &&
                 all(l1, L1_FMA | L1_MOVBE | L1_POPCNT) && all(x1, X1_LZCNT);
}
#elif defined(__aarch64__)
#include <sys/auxv.h>

static void detect(sc_ld_cpu *c)
{
    c->atomics = (getauxval(AT_HWCAP) & (1ul << 8)) != 0; /* HWCAP_ATOMICS */
}
#else
static void detect(sc_ld_cpu *c)
{
    (void)c;
}
#endif

const sc_ld_cpu *sc_ld_cpu_this(void)
{
    static sc_ld_cpu cpu;
    static bool asked;
    if (!asked) {
        detect(&cpu);
        asked = true;
    }
    return &cpu;
}
