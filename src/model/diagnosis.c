/* A diagnosis as data (include/krc/model/diagnosis.h): its life cycle,
 * signal names and the redaction of the texts it wrote. */
#include "krc/model/diagnosis.h"

#include <string.h>

#include "krc/util/mem.h"

const char *krc_signal_name(int signo)
{
    static const char *const names[] = {
        NULL,        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS",
    };
    static const char *const rt[] = {
        "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",  "SIGRTMIN+4",  "SIGRTMIN+5",
        "SIGRTMIN+6",  "SIGRTMIN+7",  "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
        "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15", "SIGRTMAX-14", "SIGRTMAX-13",
        "SIGRTMAX-12", "SIGRTMAX-11", "SIGRTMAX-10", "SIGRTMAX-9",  "SIGRTMAX-8",  "SIGRTMAX-7",
        "SIGRTMAX-6",  "SIGRTMAX-5",  "SIGRTMAX-4",  "SIGRTMAX-3",  "SIGRTMAX-2",  "SIGRTMAX-1",
        "SIGRTMAX",
    };

    if (signo >= 1 && signo <= 31) {
        return names[signo];
    }
    if (signo >= 34 && signo <= 64) {
        return rt[signo - 34];
    }
    return NULL;
}

int krc_signal_number(const char *name)
{
    for (int n = 1; name != NULL && n <= 64; n++) {
        const char *sn = krc_signal_name(n);
        if (sn != NULL && strcmp(sn, name) == 0) {
            return n;
        }
    }
    return 0;
}

void krc_diagnosis_init(struct krc_diagnosis *d)
{
    memset(d, 0, sizeof(*d));
}

void krc_diagnosis_cleanup(struct krc_diagnosis *d)
{
    size_t i;

    krc_free(d->container);
    krc_free(d->reason);
    krc_free(d->summary);
    krc_free(d->summary_unquoted);
    for (i = 0; i < d->n_evidence; i++) {
        krc_free(d->evidence[i]);
    }
    krc_free(d->evidence);
    krc_free(d->next_step);
    for (i = 0; i < d->n_commands; i++) {
        krc_free(d->commands[i]);
    }
    krc_free(d->commands);
    for (i = 0; i < d->n_unchecked; i++) {
        krc_free(d->unchecked[i]);
    }
    krc_free(d->unchecked);
    krc_diagnosis_init(d);
}

int krc_diagnosis_redact(struct krc_diagnosis *d, const struct krc_redactor *rd,
                         struct krc_error *err)
{
    int rc = 0;
    int n;

    n = krc_redact_in_place(rd, NULL, &d->summary, err);
    rc = n < 0 ? n : rc;
    n = krc_redact_in_place(rd, NULL, &d->summary_unquoted, err);
    rc = n < 0 ? n : rc;
    /* a next step may name a setting the log named (src/diagnose/advice.c) */
    n = krc_redact_in_place(rd, NULL, &d->next_step, err);
    rc = n < 0 ? n : rc;
    for (size_t i = 0; i < d->n_evidence; i++) {
        n = krc_redact_in_place(rd, NULL, &d->evidence[i], err);
        rc = n < 0 ? n : rc;
    }
    for (size_t i = 0; i < d->n_unchecked; i++) {
        n = krc_redact_in_place(rd, NULL, &d->unchecked[i], err);
        rc = n < 0 ? n : rc;
    }
    return rc < 0 ? krc_error_set(err, rc, "diagnosis redaction: out of memory") : 0;
}
