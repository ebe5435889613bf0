/* Nothing secret leaves the machine: environment capture is an allowlist, and one door out scrubs
 * every text that leaves the process (snapshot, report, JUnit, diff and libs output) of
 * credentials and makes it valid UTF-8, before anything is cut to length. */
#ifndef SC_REDACT_H
#define SC_REDACT_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* True when the variable name matters to an accelerator stack (device visibility, runtime, loader,
 * Python, framework variables). */
bool sc_env_allowed(const char *name);
/* True for the variables a capture records (each value scrubbed as the snapshot's): the allowlist,
 * and those the passive probes look files up by (HOME, PYENV_ROOT, PYENV_VERSION,
 * PYTHONNOUSERSITE, container). */
bool sc_env_replayed(const char *name);
/* True for those a replay sets in its own environment: all of them but LD_PRELOAD and LD_AUDIT,
 * which act on what a process runs. */
bool sc_env_settable(const char *name);
/* True when an environment name looks like it holds a secret: it contains TOKEN, SECRET,
 * PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL, AUTH, COOKIE or PRIVATE, or its last word is one
 * that sc_secret_name knows (*_PSK, *_PWD, *_PASS...). NCCL_IB_PKEY (a partition index) is not. */
bool sc_env_name_secret(const char *name);
/* True when a name in text (len bytes, leading dashes ignored) holds a secret value: it contains
 * password, passwd, passphrase, secret, credential or privatekey, or its last word (or last two
 * run together) ends with key, token, auth, authorization, sig, signature, pass, pwd, psk, cookie,
 * session, sessionid, cred, creds or jwt. Case-insensitive. */
bool sc_secret_name(const char *name, size_t len);

/* A malloc'd copy of n bytes of text with every credential replaced by "[redacted]", each value
 * to its end: private key blocks (also the tail of one whose BEGIN line was cut off), URL
 * userinfo, values of secret names (name=value, name: value to the end of the line, "name":
 * "value", --name value), -u/--user user:pw, sshpass -p, mysql -pPW, redis-cli -a, Bearer and
 * Basic credentials, tokens of well-known shapes; internal hosts in URLs become
 * "[internal-host]". NULL on allocation failure. */
char *sc_redact_text(const char *s, size_t n);
/* sc_redact_text of a string made valid UTF-8 first (see sc_utf8_clean). */
char *sc_redact_value(const char *value);
/* The last at most keep bytes of an output window of n raw bytes, redacted and valid UTF-8, cut on
 * a character boundary. When cut_front (the window lost its beginning), the partial first line is
 * dropped first (or up to the first whitespace when there is no line break, or all of it when
 * there is neither), so a value never survives without its name. Malloc'd; NULL on failure. */
char *sc_redact_tail(const char *raw, size_t n, bool cut_front, size_t keep);
/* printf into dst (size > 0) through the door: the whole text is formatted, made valid UTF-8
 * and redacted, and only then cut to fit, on a character boundary. */
void sc_redact_vformat(char *dst, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void sc_redact_format(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A line stackcheck prints about outside things (errors naming paths, arguments, what a snapshot
 * holds): prefix as it is, then the formatted text through the door (valid UTF-8, redacted) and
 * escaped for a terminal (see sc_term_print), then a newline. */
void sc_print_line(FILE *out, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sc_print_vline(FILE *out, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* The env object of the snapshot from envp: allowed names only, values scrubbed, secret names
 * kept with the value "[redacted]". */
cJSON *sc_env_capture(char *const *envp);
/* The same for a capture's manifest: the names sc_env_replayed accepts. */
cJSON *sc_env_capture_replayed(char *const *envp);
/* True for a file a capture never holds, even when a probe read it: shadow files, sudoers,
 * /proc/PID/environ, SSH, GnuPG, cloud and registry credentials, key files. */
bool sc_redact_capture_denied(const char *path);
/* What a capture holds of the file at path (an absolute path inside the captured root), n bytes
 * of data. Returns 0 when it is kept as it is (binary data, with a NUL byte), 1 with *out
 * (malloc'd, *out_len bytes) to hold instead, or -ENOMEM. /etc/passwd and /etc/group are reduced to
 * the lines of system accounts (ids below 1000, and 65534) and of the ids in keep[0..nkeep), as
 * "name:x:uid:gid:::" and "name:x:gid:" (no real names, homes, shells, hashes or members); any
 * other text is scrubbed as sc_redact_text does, its other bytes unchanged (a replay reads them).
 */
int sc_redact_capture(const char *path, const char *data, size_t n, const unsigned *keep,
                      size_t nkeep, char **out, size_t *out_len);
/* The one door out: every string and object key in the tree made valid UTF-8 and redacted, in
 * place. Every output (snapshot, report, JUnit, diff, libs) is produced from a tree that went
 * through it. */
void sc_redact_json(cJSON *node);

#endif
