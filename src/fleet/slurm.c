/* --slurm's acting half: which node this is, scontrol run as a child with a deadline (found on
 * PATH, or /usr/bin and /bin when slurmd gives the health check no PATH), the node's state read,
 * drained or resumed, and the one line that says what happened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sc_cli.h"
#include "sc_exec.h"
#include "sc_host.h"
#include "sc_json.h"
#include "sc_redact.h"
#include "sc_slurm.h"

#define NAME_MAX_LEN 255

int sc_slurm_node_name(char *buf, size_t size, sc_error *err)
{
    const char *env = getenv("SLURMD_NODENAME");
    char host[NAME_MAX_LEN + 1];
    const char *name = env && env[0] ? env : sc_host_short_name(host, sizeof host) ? host : NULL;
    if (!name)
        return sc_error_set(err, -EINVAL,
                            "no node name: SLURMD_NODENAME is unset and the host "
                            "has no name");
    size_t n = strlen(name);
    if (n > NAME_MAX_LEN || n >= size ||
        strspn(name, "abcdefghijklmnopqrstuvwxyz"
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-") != n)
        return sc_error_set(err, -EINVAL, "node name '%.100s' is not a plain Slurm node name",
                            name);
    memcpy(buf, name, n + 1);
    return 0;
}

/* Runs scontrol with args (NULL-terminated); its output (stdout and stderr) into out. Returns 0
 * when it exited 0, else -errno with err saying what it said. */
static int scontrol(const sc_options *opt, const char *const *args, sc_buf *out, sc_error *err)
{
    const char *argv[8] = {opt->scontrol ? opt->scontrol : "scontrol"};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = args[i];
    int status = 0;
    int rc = sc_exec_capture(argv, SC_SLURM_SCONTROL_S * 1000.0, true, out, &status, err);
    if (rc < 0)
        return rc;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return sc_error_set(err, -ENOENT, "cannot run %s (not found or not executable)", argv[0]);
    char said[200] = "";
    size_t n = out->len < sizeof said - 1 ? out->len : sizeof said - 1;
    memcpy(said, out->data ? out->data : "", n);
    said[n] = '\0';
    said[strcspn(said, "\n")] = '\0';
    return sc_error_set(err, -EIO, "%s %s failed (%s %d): %s", argv[0], args[0],
                        WIFEXITED(status) ? "exit status" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), said);
}

static int read_node(const sc_options *opt, const char *name, sc_slurm_node *node, sc_error *err)
{
    const char *const args[] = {"show", "node", name, NULL};
    sc_buf out;
    sc_buf_init(&out);
    int rc = scontrol(opt, args, &out, err);
    if (rc == 0 && sc_slurm_parse_node(out.data ? out.data : "", out.len, node) < 0)
        rc = sc_error_set(err, -ENOENT, "scontrol show node %s names no node", name);
    sc_buf_free(&out);
    return rc;
}

static int update_node(const sc_options *opt, const char *name, sc_slurm_action action,
                       const char *reason, sc_error *err)
{
    char node_arg[NAME_MAX_LEN + 16], reason_arg[SC_SLURM_REASON_MAX + 16];
    snprintf(node_arg, sizeof node_arg, "nodename=%s", name);
    snprintf(reason_arg, sizeof reason_arg, "reason=%s", reason);
    const char *const drain[] = {"update", node_arg, "state=drain", reason_arg, NULL};
    const char *const resume[] = {"update", node_arg, "state=resume", NULL};
    sc_buf out;
    sc_buf_init(&out);
    int rc = scontrol(opt, action == SC_SLURM_DRAIN ? drain : resume, &out, err);
    sc_buf_free(&out);
    return rc;
}

/* The verdict in the line: "fail: driver driver.no-accelerator" or the status. */
static void verdict_words(const cJSON *snapshot, const char *reason, char *buf, size_t size)
{
    const char *status = sc_json_str(sc_json_member(snapshot, "summary"), "status");
    if (reason[0])
        snprintf(buf, size, "fail: %s", reason + strlen(SC_SLURM_PREFIX " "));
    else
        snprintf(buf, size, "%s", status ? status : "?");
}

int sc_slurm_act(const cJSON *snapshot, const sc_options *opt, int exit_code, FILE *out)
{
    char name[NAME_MAX_LEN + 1] = "?", reason[SC_SLURM_REASON_MAX + 1];
    char verdict[SC_SLURM_REASON_MAX + 8];
    sc_error err = {0};
    sc_slurm_node node;
    const char *why = "";
    sc_slurm_reason(snapshot, reason, sizeof reason);
    verdict_words(snapshot, reason, verdict, sizeof verdict);
    if (sc_slurm_node_name(name, sizeof name, &err) < 0 || read_node(opt, name, &node, &err) < 0) {
        sc_print_line(out, "stackcheck: ", "%s: %s; %s", name, verdict, err.message);
        return SC_EXIT_USAGE;
    }
    sc_slurm_action action = sc_slurm_decide(exit_code != 0, &node, reason, &why);
    bool failed_same = exit_code != 0 && strcmp(node.reason, reason) == 0;
    if (action != SC_SLURM_KEEP && update_node(opt, name, action, reason, &err) < 0) {
        sc_print_line(out, "stackcheck: ", "%s: %s; %s", name, verdict, err.message);
        return SC_EXIT_USAGE;
    }
    bool said_why =
        action == SC_SLURM_RESUME || (action == SC_SLURM_KEEP && why[0] && !failed_same);
    if (said_why)
        sc_print_line(out, "stackcheck: ", "%s: %s; %s (%s, reason: %s)", name, verdict, why,
                      node.state, node.reason[0] ? node.reason : "none");
    else
        sc_print_line(out, "stackcheck: ", "%s: %s%s%s", name, verdict, why[0] ? "; " : "", why);
    return exit_code;
}
