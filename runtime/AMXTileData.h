/*===- AMXTileData.h - Ask Linux for the AMX tile data, in C ------*- C -*-===*
 *
 * Linux (5.16+) enables AMX's 8 KiB of tile state for a process only on
 * request: until `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`
 * succeeds, an AMX instruction raises SIGILL. Granted once, it holds for
 * every thread of the process.
 *
 * The one copy of that request: C, header-only and static, because two
 * kinds of code ask. The JIT runtime and the tools that run its code
 * include it through AMXPermission.h; the C wrapper of each of
 * mha-compile's libraries has it compiled in (mha-compile embeds this
 * file), since a library depends on nothing of mha at run time. Static,
 * so that two libraries in one process keep their own.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MHA_RUNTIME_AMXTILEDATA_H
#define MHA_RUNTIME_AMXTILEDATA_H

#include <errno.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Asks Linux for this process's permission to use the AMX tile data.
   Idempotent; returns 0 on success, else the errno of the refusal (ENOSYS
   where there is no such request: not Linux on x86-64). */
static inline int mhaRequestAMXTileData(void) {
#if defined(__linux__) && defined(__x86_64__)
  /* ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA */
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)
    return errno ? errno : EINVAL;
  return 0;
#else
  return ENOSYS;
#endif
}

#endif /* MHA_RUNTIME_AMXTILEDATA_H */
