/* Nobody left behind: a process that starts foreign code is a child subreaper, so whatever that
 * code orphans (setsid'd and double-forked daemons included) is re-parented to it rather than to
 * init, and it kills and reaps all its descendants before it goes on. Waits have deadlines. */
#ifndef SC_REAP_H
#define SC_REAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER). Idempotent; returns 0 or
 * a negative errno (a kernel before 3.4). */
int sc_reap_subreaper(void);

/* SIGKILLs every live descendant of the calling process (found through the ppid chains of the
 * live /proc), reaps the children among them, and repeats until none is left alive or about two
 * seconds have passed (a process stuck in the kernel). Children marked with sc_reap_keep and
 * their descendants are spared. Returns how many distinct processes were signalled. */
int sc_reap_descendants(void);

/* Marks pid, a child of the caller, as one to keep: sc_reap_descendants spares it and all it
 * started until sc_reap_release(pid). Children running side by side are kept this way. */
void sc_reap_keep(pid_t pid);
void sc_reap_release(pid_t pid);
/* In a new child: the parent's kept children are not its own. */
void sc_reap_forget_kept(void);

/* waitpid(pid) until the monotonic deadline_ms; true with *status filled when it was reaped. */
bool sc_reap_wait(pid_t pid, int *status, double deadline_ms);

/* Parses the start of a /proc/PID/stat line (n bytes, "pid (comm) S ppid pgrp ...": the command
 * name may hold spaces and parentheses) into the state letter, parent pid and process group;
 * false when it is malformed. */
bool sc_proc_stat_parse(const char *text, size_t n, char *state, pid_t *ppid, pid_t *pgrp);

#endif
