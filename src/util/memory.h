/* memory.h: how much memory this process may use, for the model-size budget
 * (mbs_model_compile refuses a model whose estimate exceeds it). */
#ifndef MBS_UTIL_MEMORY_H
#define MBS_UTIL_MEMORY_H

#include <stddef.h>

/* the bytes this process may use: the smallest of the physical memory
 * (sysconf _SC_PHYS_PAGES), the cgroup limit (/sys/fs/cgroup/memory.max, cgroup v2, or
 * memory/memory.limit_in_bytes, v1; a Slurm job's or a container's) and the address-space
 * limit (RLIMIT_AS), with which of them it is in what (e.g. "the cgroup limit in
 * /sys/fs/cgroup/memory.max"); 0 when none is known */
double mbs_memory_machine(char *what, size_t nwhat);

#endif
