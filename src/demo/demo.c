/* `krc demo`: simulated cluster + the real daemon + the scenario (demo.h). */
#include "krc/demo/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "krc/config/config.h"
#include "krc/daemon/daemon.h"
#include "krc/demo/scenario.h"
#include "krc/demo/sim.h"
#include "krc/demo/slack_view.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define STEP_MS 1500         /* between two crashes */
#define SYNC_WAIT_MS 15000   /* for krc's pod watch to open */
#define TRACK_WAIT_MS 3000   /* then for change tracking's lists (they come with it) */
#define QUIET_MS 4500        /* no message for this long after the last step: done */
#define STORM_SETTLE_MS 6000 /* the storm summary comes stormSummaryDelay after the storm */
#define FINISH_MS 45000      /* at most this long after the last step */
#define LOOP_STEPS 2         /* a crash-looping container crashes again 2 steps later */
#define MAX_CASES 32

/* The demo's krc settings: storms are judged per destination (and every
 * restart counts, muted repeats too), so each team has its webhook; the
 * summary comes sooner than the 10 s default. */
#define STORM_THRESHOLD "4"
#define STORM_SUMMARY_DELAY "3s"
/* krc's default, written out: a crash loop's repeats within it are muted
 * (recorded, not posted) */
#define MUTE_SECONDS "600"

struct demo {
    const struct krc_demo_options *o;
    struct krc_demo_sim *sim;
    pthread_mutex_t print_lock;
    atomic_int stop;      /* the scenario is over: the daemon stops */
    atomic_int cancel;    /* the daemon stopped: the scenario ends */
    int64_t t0;           /* wall clock at start */
    int64_t began;        /* unix s: the simulated cluster was populated (pods' times) */
    int seq;              /* event names */
    int failed;           /* the scenario could not build its objects */
    int fields_announced; /* the field demonstrations' header was printed */
    /* per case: crashes so far, the end of the first and of the last one */
    int crashes[MAX_CASES];
    int64_t first_end[MAX_CASES];
    int64_t last_end[MAX_CASES];
};

static void say(struct demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct demo *d, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&d->print_lock);
    va_start(ap, fmt);
    vfprintf(d->o->out, fmt, ap);
    va_end(ap);
    fflush(d->o->out);
    pthread_mutex_unlock(&d->print_lock);
}

/* A webhook message arrived: print it as it arrives. */
static void on_message(const struct krc_demo_msg *m, void *userdata)
{
    struct demo *d = userdata;
    char *text = krc_demo_term_render(m->body, d->o->colour);

    pthread_mutex_lock(&d->print_lock);
    if (m->note != NULL) {
        fprintf(d->o->out, "(%s)\n", m->note);
    }
    fputs(text != NULL ? text : "(a message arrived; it could not be rendered)\n", d->o->out);
    fputc('\n', d->o->out);
    fflush(d->o->out);
    pthread_mutex_unlock(&d->print_lock);
    krc_free(text);
}

/* The field demonstrations' webhook (write_config): their alerts are not
 * about public cases, and say so in the terminal and in alerts.html. */
#define FIELD_WEBHOOK "/services/TDEMO/BFIELDS/demo"

static const char *field_note(const char *path, void *userdata)
{
    (void)userdata;
    return path != NULL && strcmp(path, FIELD_WEBHOOK) == 0
               ? "Field demonstration, not a public case: the pod is composed from the field "
                 "definitions of the Kubernetes API reference (docs/demo.md)"
               : NULL;
}

/* A Kubernetes Event was created on a pod: one line, as kubectl describe
 * pod would show it. */
static void on_kube_event(const cJSON *ev, void *userdata)
{
    struct demo *d = userdata;
    const cJSON *reg = cJSON_GetObjectItemCaseSensitive(ev, "regarding");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(reg, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(reg, "name");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(ev, "note");
    char line[2048];
    char *safe;

    /* what krc wrote quotes the pod (its name, reason, log): shown, never obeyed */
    snprintf(line, sizeof(line), "Kubernetes Event written on pod %s/%s: %s: %s",
             cJSON_IsString(ns) ? ns->valuestring : "?",
             cJSON_IsString(name) ? name->valuestring : "?",
             cJSON_IsString(reason) ? reason->valuestring : "?",
             cJSON_IsString(note) ? note->valuestring : "");
    safe = krc_text_safe(line, sizeof(line) * 3, 0);
    pthread_mutex_lock(&d->print_lock);
    fprintf(d->o->out, "%s\n\n", safe != NULL ? safe : "Kubernetes Event written (out of memory)");
    fflush(d->o->out);
    pthread_mutex_unlock(&d->print_lock);
    krc_free(safe);
}

/* --- the scenario thread ------------------------------------------------------- */

static int sleep_ms(struct demo *d, int64_t ms)
{
    return krc_clock_sleep_ms(ms, &d->cancel) != 0 || atomic_load(&d->cancel);
}

static int put(struct demo *d, int rc)
{
    if (rc < 0) {
        d->failed = 1;
        krc_log(KRC_LOG_ERROR, "demo: the simulated cluster could not store an object: %s",
                krc_strerror(rc));
    }
    return rc;
}

/* The pod's controllers (change tracking reads them): a ReplicaSet's
 * Deployment and ReplicaSets, a StatefulSet and its ControllerRevision, a
 * Job; nothing for another owner. */
static int put_workload(struct demo *d, const struct krc_demo_case *c)
{
    char name[254];

    if (c->owner_kind != NULL && strcmp(c->owner_kind, "StatefulSet") == 0) {
        if (put(d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_STATEFULSETS,
                                           krc_demo_statefulset_json(c, d->began))) < 0 ||
            put(d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_CONTROLLERREVISIONS,
                                           krc_demo_controllerrevision_json(c, d->began))) < 0) {
            return -1;
        }
        return 0;
    }
    if (c->owner_kind != NULL && strcmp(c->owner_kind, "Job") == 0) {
        return put(
            d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_JOBS, krc_demo_job_json(c, d->began)));
    }
    if (krc_demo_deployment_name(c, name, sizeof(name)) < 0) {
        return 0;
    }
    if (put(d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_DEPLOYMENTS,
                                       krc_demo_deployment_json(c, d->began))) < 0 ||
        (c->rollout != NULL &&
         put(d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_REPLICASETS,
                                        krc_demo_replicaset_json(c, 1, d->began))) < 0) ||
        put(d, krc_demo_sim_put_object(d->sim, KRC_DEMO_RES_REPLICASETS,
                                       krc_demo_replicaset_json(c, 0, d->began))) < 0) {
        return -1;
    }
    return 0;
}

/* The starting cluster: every node ready, every pod running. */
static int populate(struct demo *d)
{
    size_t n_cases;
    size_t n_nodes;
    const struct krc_demo_case *cases = krc_demo_cases(&n_cases);
    const struct krc_demo_node *nodes = krc_demo_nodes(&n_nodes);
    int64_t now = krc_clock_now();

    d->began = now;
    for (size_t i = 0; i < n_nodes; i++) {
        if (put(d, krc_demo_sim_put_node(d->sim, krc_demo_node_json(&nodes[i], 1, now - 86400 * 30,
                                                                    now - 86400))) < 0) {
            return -1;
        }
    }
    for (size_t i = 0; i < n_cases; i++) {
        if (put_workload(d, &cases[i]) < 0) {
            return -1;
        }
        for (int r = 0; r < cases[i].replicas; r++) {
            if (put(d, krc_demo_sim_put_pod(d->sim,
                                            krc_demo_pod_json(&cases[i], r, 0,
                                                              krc_demo_pod_created(&cases[i], now),
                                                              0, 0),
                                            NULL, 0)) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* Case `ci` crashes (again): its events on the first crash, the kubelet's
 * BackOff event on a repeat, then the pod with the crashed instance. The
 * first instance ran the case's run time; a repeat ran from the previous
 * crash's back-off (shortened: see docs/demo.md) until now. */
static int crash(struct demo *d, size_t ci, const struct krc_demo_case *c, int64_t ended)
{
    int n = ++d->crashes[ci];
    int64_t ran_from = n == 1 ? ended - c->run_s : d->last_end[ci] + 1;

    if (n == 1) {
        d->first_end[ci] = ended;
    }
    d->last_end[ci] = ended;
    for (int r = 0; r < c->replicas; r++) {
        for (size_t k = 0; n == 1 && k < c->n_events; k++) {
            if (put(d, krc_demo_sim_add_event(d->sim, krc_demo_event_json(c, r, &c->events[k],
                                                                          ended, ++d->seq))) < 0) {
                return -1;
            }
        }
        if (n > 1 &&
            put(d, krc_demo_sim_add_event(d->sim, krc_demo_backoff_event_json(
                                                      c, r, n - 1, d->first_end[ci], ended))) < 0) {
            return -1;
        }
    }
    for (int r = 0; r < c->replicas; r++) {
        if (put(d,
                krc_demo_sim_put_pod(
                    d->sim,
                    krc_demo_pod_json(c, r, n, krc_demo_pod_created(c, d->began), ran_from, ended),
                    c->log, ended)) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The storm's node stops posting status: NotReady, with the node
 * controller's events. */
static int node_not_ready(struct demo *d, const char *name)
{
    const struct krc_demo_node *n = krc_demo_node_named(name);
    int64_t now = krc_clock_now();
    char msg[256];

    if (n == NULL) {
        return -1;
    }
    snprintf(msg, sizeof(msg), "Node %s status is now: NodeNotReady", name);
    if (put(d, krc_demo_sim_put_node(d->sim, krc_demo_node_json(n, 0, now - 86400 * 30, now))) <
            0 ||
        put(d, krc_demo_sim_add_event(
                   d->sim, krc_demo_node_event_json(name, "Normal", "NodeNotReady", msg,
                                                    "node-controller", now, ++d->seq))) < 0) {
        return -1;
    }
    return 0;
}

static void step_line(struct demo *d, const struct krc_demo_case *c, int restart)
{
    const char *bold = d->o->colour ? "\033[1m" : "";
    const char *dim = d->o->colour ? "\033[2m" : "";
    const char *off = d->o->colour ? "\033[0m" : "";
    char pod[300];

    if (c->replicas > 1) {
        snprintf(pod, sizeof(pod), "%s/%s-{0..%d}", c->ns, c->pod, c->replicas - 1);
    } else {
        snprintf(pod, sizeof(pod), "%s/%s", c->ns, c->pod);
    }
    if (restart > 1) {
        say(d,
            "%s>> %5.1fs  %s%s: crashes again the same way (restartCount %d, the kubelet's "
            "BackOff)\n\n",
            bold, (double)(krc_clock_mono_ms() - d->t0) / 1000.0, pod, off, restart);
        return;
    }
    if (c->field != NULL) {
        /* not a public case: say so next to the step */
        say(d,
            "%s>> %5.1fs  %s%s: %s\n%s   field demonstration, not a public case: %s; pod composed "
            "from the API reference (%s)%s\n\n",
            bold, (double)(krc_clock_mono_ms() - d->t0) / 1000.0, pod, off, c->what, dim, c->field,
            c->source, off);
        return;
    }
    say(d, "%s>> %5.1fs  %s%s: %s\n%s   facts from %s%s\n\n", bold,
        (double)(krc_clock_mono_ms() - d->t0) / 1000.0, pod, off, c->what, dim, c->source, off);
}

/* The step at which case i starts: the table's, else its index. */
static size_t start_step(const struct krc_demo_case *c, size_t i)
{
    return c->step > 0 ? (size_t)c->step : i;
}

/* The crash of case i due at step `step`: 1 for its first, k for its k-th
 * (a crash loop's repeats come LOOP_STEPS steps apart), 0 for none. */
static int due(const struct krc_demo_case *c, size_t i, size_t step)
{
    int restarts = c->restarts > 1 ? c->restarts : 1;
    size_t first = start_step(c, i);
    int k;

    if (step < first || (step - first) % LOOP_STEPS != 0) {
        return 0;
    }
    k = (int)((step - first) / LOOP_STEPS) + 1;
    return k <= restarts ? k : 0;
}

/* The last step of the scenario. */
static size_t last_step(const struct krc_demo_case *cases, size_t n)
{
    size_t last = 0;

    for (size_t i = 0; i < n; i++) {
        size_t end = start_step(&cases[i], i) +
                     (size_t)(cases[i].restarts > 1 ? cases[i].restarts - 1 : 0) * LOOP_STEPS;
        last = end > last ? end : last;
    }
    return last;
}

/* Step `step`: the repeats due, then the cases that start. */
static int play_step(struct demo *d, const struct krc_demo_case *cases, size_t n, size_t step)
{
    for (size_t i = 0; i < n; i++) {
        int k = due(&cases[i], i, step);
        if (k > 1) {
            step_line(d, &cases[i], k);
            if (crash(d, i, &cases[i], krc_clock_now()) < 0) {
                return -1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        if (due(c, i, step) != 1) {
            continue;
        }
        if (c->field != NULL && !d->fields_announced) {
            d->fields_announced = 1;
            say(d, ">> Kubernetes 1.33-1.37 fields: field demonstrations follow. Their pods are "
                   "composed from the field definitions of the Kubernetes API reference; they "
                   "are not public crash cases.\n\n");
        }
        if (c->replicas > 1 && strcmp(c->node, krc_demo_storm_node()) == 0) {
            if (node_not_ready(d, c->node) < 0) {
                return -1;
            }
            say(d, ">> node %s stops posting status: NotReady\n", c->node);
        }
        step_line(d, c, 1);
        if (crash(d, i, c, krc_clock_now()) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Wait for the messages to stop coming (the storm summary last). */
static void wait_quiet(struct demo *d)
{
    int64_t last_step = krc_clock_mono_ms();

    while (!atomic_load(&d->cancel)) {
        int64_t now = krc_clock_mono_ms();
        int64_t last_msg = 0;
        krc_demo_sim_message_count(d->sim, &last_msg);
        if (now - last_step >= FINISH_MS) {
            krc_log(KRC_LOG_WARN, "demo: messages still arriving after %d s; stopping",
                    FINISH_MS / 1000);
            return;
        }
        if (now - last_step >= STORM_SETTLE_MS && last_msg != 0 && now - last_msg >= QUIET_MS) {
            return;
        }
        if (sleep_ms(d, 100)) {
            return;
        }
    }
}

static void *scenario_main(void *arg)
{
    struct demo *d = arg;
    size_t n_cases;
    const struct krc_demo_case *cases = krc_demo_cases(&n_cases);
    int64_t deadline = krc_clock_mono_ms() + SYNC_WAIT_MS;

    while (krc_demo_sim_watchers(d->sim) == 0 && krc_clock_mono_ms() < deadline) {
        if (sleep_ms(d, 50)) {
            return NULL;
        }
    }
    if (krc_demo_sim_watchers(d->sim) == 0) {
        krc_log(KRC_LOG_ERROR, "demo: krc did not open its pod watch in %d s", SYNC_WAIT_MS / 1000);
        d->failed = 1;
        atomic_store(&d->stop, 1);
        return NULL;
    }
    /* change tracking's lists (nodes, the workload controllers) come with the
     * pod watch: the first crash waits for them, so that its alert can say
     * what changed before it */
    deadline = krc_clock_mono_ms() + TRACK_WAIT_MS;
    while (krc_demo_sim_listed_resources(d->sim) < KRC_DEMO_RES_N - 1 &&
           krc_clock_mono_ms() < deadline) {
        if (sleep_ms(d, 20)) {
            return NULL;
        }
    }
    if (krc_demo_sim_listed_resources(d->sim) < KRC_DEMO_RES_N - 1) {
        krc_log(KRC_LOG_WARN,
                "demo: krc listed %d of the %d resources change tracking watches in %d s; its "
                "alerts may say nothing about what changed",
                krc_demo_sim_listed_resources(d->sim), KRC_DEMO_RES_N - 1, TRACK_WAIT_MS / 1000);
    }
    if (n_cases > MAX_CASES) {
        krc_log(KRC_LOG_ERROR, "demo: the scenario has %zu cases, at most %d are played", n_cases,
                MAX_CASES);
        d->failed = 1;
        atomic_store(&d->stop, 1);
        return NULL;
    }
    say(d, "krc is watching the simulated cluster; the crashes begin.\n\n");
    for (size_t step = 0; step <= last_step(cases, n_cases); step++) {
        if (sleep_ms(d, STEP_MS)) {
            return NULL;
        }
        if (play_step(d, cases, n_cases, step) < 0) {
            break;
        }
    }
    if (!d->failed) {
        wait_quiet(d);
    }
    atomic_store(&d->stop, 1);
    return NULL;
}

/* --- files ------------------------------------------------------------------------- */

static int write_file(const char *path, const char *text, struct krc_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    ssize_t w;
    int saved;

    if (fd < 0) {
        saved = errno;
        return krc_error_set(err, KRC_EIO, "%s: %s", path, KRC_ERRNO_STR(saved));
    }
    w = write(fd, text, len);
    saved = errno;
    if (close(fd) < 0 || w != (ssize_t)len) {
        unlink(path);
        return krc_error_set(err, KRC_EIO, "%s: cannot write: %s", path, KRC_ERRNO_STR(saved));
    }
    return 0;
}

/* "text" as a YAML double-quoted scalar (JSON escapes are YAML escapes). */
static int yaml_str(struct krc_buf *b, const char *text)
{
    return (krc_buf_append_char(b, '"') < 0 || krc_buf_append_json_str(b, text, strlen(text)) < 0 ||
            krc_buf_append_char(b, '"') < 0)
               ? KRC_ENOMEM
               : 0;
}

static int write_kubeconfig(const char *path, int port, const char *token, struct krc_error *err)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "# krc demo: the simulated cluster; removed when the demo ends\n"
             "apiVersion: v1\nkind: Config\n"
             "clusters:\n- name: krc-demo\n  cluster:\n    server: http://127.0.0.1:%d\n"
             "users:\n- name: krc-demo\n  user:\n    token: %s\n"
             "contexts:\n- name: krc-demo\n  context:\n    cluster: krc-demo\n    user: krc-demo\n"
             "current-context: krc-demo\n",
             port, token);
    return write_file(path, text, err);
}

static int write_config(const char *path, int port, const char *db, struct krc_error *err)
{
    struct krc_buf b;
    int rc;

    krc_buf_init(&b, 65536);
    rc = krc_buf_printf(
        &b,
        "# krc demo: the krc configuration it runs with; removed when the demo ends\n"
        "clusterName: krc-demo\n"
        "slackWebhookUrl: http://127.0.0.1:%d/services/TDEMO/BAPPS/demo\n"
        "listen: \"off\"\n"
        "stormThreshold: " STORM_THRESHOLD "\n"
        "stormSummaryDelay: " STORM_SUMMARY_DELAY "\n"
        "muteSeconds: " MUTE_SECONDS "\n"
        "trackChanges: true\n"
        "routes:\n"
        "  - namespace: \"^(argo|llm)$\"\n"
        "    webhookUrl: http://127.0.0.1:%d/services/TDEMO/BPLATFORM/demo\n"
        "  - namespace: ml-training\n"
        "    webhookUrl: http://127.0.0.1:%d/services/TDEMO/BML/demo\n"
        "  - namespace: astronomer\n"
        "    webhookUrl: http://127.0.0.1:%d/services/TDEMO/BDATA/demo\n"
        "  - namespace: cache\n"
        "    webhookUrl: http://127.0.0.1:%d/services/TDEMO/BCACHE/demo\n"
        "  - namespace: \"^(batch|inference|ml-serving|analytics)$\"\n"
        "    webhookUrl: http://127.0.0.1:%d" FIELD_WEBHOOK "\n"
        "db: ",
        port, port, port, port, port, port);
    if (rc == 0) {
        rc = yaml_str(&b, db);
    }
    if (rc == 0) {
        rc = krc_buf_append_char(&b, '\n');
    }
    rc = rc == 0 ? write_file(path, krc_buf_str(&b), err)
                 : krc_error_set(err, KRC_ENOMEM, "out of memory");
    krc_buf_cleanup(&b);
    return rc;
}

static int random_token(char *out, size_t outsz)
{
    unsigned char raw[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;

    if (fd >= 0) {
        close(fd);
    }
    if (n != (ssize_t)sizeof(raw) || outsz < 2 * sizeof(raw) + 1) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    }
    return 0;
}

/* The output directory (made if missing) and a fresh history there. */
static int prepare_out(const char *dir, const char *db, struct krc_error *err)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char path[4200];
    struct stat st;

    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        int saved = errno;
        return krc_error_set(err, KRC_EIO, "--out %s: cannot create the directory: %s", dir,
                             KRC_ERRNO_STR(saved));
    }
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        return krc_error_set(err, KRC_EINVAL, "--out %s: not a directory", dir);
    }
    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", db, suffix[i]);
        if (unlink(path) < 0 && errno != ENOENT) {
            int saved = errno;
            return krc_error_set(err, KRC_EIO, "%s: cannot remove the previous demo's history: %s",
                                 path, KRC_ERRNO_STR(saved));
        }
    }
    return 0;
}

/* --- the run -------------------------------------------------------------------------- */

struct paths {
    char db[4096];
    char html[4096];
    char kubeconfig[4096];
    char config[4096];
};

static int make_paths(const char *dir, struct paths *p, struct krc_error *err)
{
    if ((size_t)snprintf(p->db, sizeof(p->db), "%s/%s", dir, KRC_DEMO_DB) >= sizeof(p->db) ||
        (size_t)snprintf(p->html, sizeof(p->html), "%s/%s", dir, KRC_DEMO_HTML) >=
            sizeof(p->html) ||
        (size_t)snprintf(p->kubeconfig, sizeof(p->kubeconfig), "%s/.krc-demo-kubeconfig", dir) >=
            sizeof(p->kubeconfig) ||
        (size_t)snprintf(p->config, sizeof(p->config), "%s/.krc-demo-config.yaml", dir) >=
            sizeof(p->config)) {
        return krc_error_set(err, KRC_EINVAL, "--out %s: path too long", dir);
    }
    return 0;
}

/* Load the generated configuration the way `krc run --config` does. */
static int load_config(struct krc_config *cfg, const struct paths *p, struct krc_error *err)
{
    char *errors = NULL;
    int rc = krc_config_load_file(cfg, p->config, &errors, err);

    if (rc < 0) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", errors != NULL ? errors : err->msg);
        krc_free(errors);
        return krc_error_set(err, rc, "demo configuration: %s", why);
    }
    krc_free(errors);
    krc_free(cfg->kubeconfig);
    cfg->kubeconfig = krc_strdup(p->kubeconfig);
    if (cfg->kubeconfig == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_config_validate(cfg, err);
}

/* Run the daemon against the simulation while the scenario thread plays. */
static int play(struct demo *d, const struct krc_config *cfg, int *ret_signal)
{
    pthread_t scenario;
    int rc;

    if (pthread_create(&scenario, NULL, scenario_main, d) != 0) {
        krc_log(KRC_LOG_ERROR, "demo: cannot start the scenario thread");
        return 1;
    }
    rc = krc_daemon_run_until(cfg, &d->stop, ret_signal);
    atomic_store(&d->cancel, 1);
    pthread_join(scenario, NULL);
    return rc;
}

static void block_signals(void)
{
    sigset_t sigs;

    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The simulated cluster is on loopback: a proxy from the environment
 * (libcurl honours http_proxy) must not carry krc's requests to it. Before
 * any thread starts (setenv). */
static void bypass_proxy(void)
{
    static const char *const names[] = {"no_proxy", "NO_PROXY"};

    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        char buf[4096];
        if (v != NULL && *v != '\0' && strlen(v) < sizeof(buf) - 16) {
            snprintf(buf, sizeof(buf), "%s,127.0.0.1", v);
        } else {
            snprintf(buf, sizeof(buf), "127.0.0.1");
        }
        /* clang-tidy: setenv runs before krc_demo_run starts any thread */
        /* NOLINTNEXTLINE(concurrency-mt-unsafe) */
        setenv(names[i], buf, 1); /* mt-ok: called before any thread starts */
    }
}

/* A SIGINT/SIGTERM that came after the daemon stopped (0: none). */
static int pending_signal(void)
{
    sigset_t sigs;
    struct timespec zero = {0, 0};

    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    int sig = sigtimedwait(&sigs, NULL, &zero);

    return sig > 0 ? sig : 0;
}

static int write_html(struct demo *d, const struct paths *p)
{
    struct krc_error e;
    size_t n;
    const struct krc_demo_msg *msgs = krc_demo_sim_messages(d->sim, &n);

    krc_error_clear(&e);
    if (krc_demo_html_write(p->html, msgs, n, "krc demo: the alerts as Slack shows them", &e) < 0) {
        krc_log(KRC_LOG_ERROR, "demo: %s", e.msg);
        return -1;
    }
    return 0;
}

static int run_sim(struct demo *d, const struct paths *p, int *ret_signal)
{
    struct krc_demo_sim_options so = {NULL, on_message, d, on_kube_event, field_note};
    struct krc_config cfg;
    struct krc_error e;
    char token[64];
    int rc = 1;

    krc_error_clear(&e);
    if (random_token(token, sizeof(token)) < 0) {
        krc_log(KRC_LOG_ERROR, "demo: cannot read /dev/urandom for the API token");
        return 1;
    }
    so.token = token;
    krc_log_add_secret(token);
    if (krc_demo_sim_start(&so, &d->sim, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "demo: %s", e.msg);
        return 1;
    }
    krc_config_init(&cfg);
    if (populate(d) == 0 &&
        write_kubeconfig(p->kubeconfig, krc_demo_sim_port(d->sim), token, &e) == 0 &&
        write_config(p->config, krc_demo_sim_port(d->sim), p->db, &e) == 0 &&
        load_config(&cfg, p, &e) == 0) {
        say(d, "Simulated cluster: Kubernetes API and Slack webhook on http://127.0.0.1:%d\n",
            krc_demo_sim_port(d->sim));
        rc = play(d, &cfg, ret_signal);
    } else if (!d->failed) {
        krc_log(KRC_LOG_ERROR, "demo: %s", e.msg);
    }
    unlink(p->kubeconfig);
    unlink(p->config);
    krc_config_cleanup(&cfg);
    /* after the daemon: its sender drained into the webhook */
    krc_demo_sim_stop(d->sim);
    return rc != 0 || d->failed ? 1 : 0;
}

int krc_demo_run(const struct krc_demo_options *o)
{
    struct demo d;
    struct paths p;
    struct krc_error e;
    int sig = 0;
    int rc;

    memset(&d, 0, sizeof(d));
    d.o = o;
    d.t0 = krc_clock_mono_ms();
    pthread_mutex_init(&d.print_lock, NULL);
    block_signals();
    bypass_proxy();
    krc_error_clear(&e);
    if (make_paths(o->out_dir, &p, &e) < 0 || prepare_out(o->out_dir, p.db, &e) < 0) {
        fprintf(stderr, "krc demo: %s\n", e.msg);
        pthread_mutex_destroy(&d.print_lock);
        return 1;
    }
    rc = run_sim(&d, &p, &sig);
    if (d.sim != NULL && write_html(&d, &p) < 0) {
        rc = 1;
    }
    krc_demo_sim_free(d.sim);
    pthread_mutex_destroy(&d.print_lock);
    krc_log_clear_secrets();
    if (sig == 0) {
        sig = pending_signal();
    }
    if (sig != 0) {
        return sig == SIGTERM ? 143 : 130;
    }
    return rc;
}
