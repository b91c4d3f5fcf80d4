/* The rules read in what the application wrote and how it exited
 * (src/diagnose/rules.c has the table): GPU and runtime heap exhaustion, the
 * fatal signals, GPU faults, a network dependency given up on, and an
 * application error. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"

static const char *signal_meaning(int signo)
{
    switch (signo) {
    case 1:
        return "hang-up";
    case 2:
        return "interrupt";
    case 3:
        return "quit, usually with a core dump";
    case 4:
        return "illegal instruction, e.g. a binary built for another CPU";
    case 6:
        return "abort: a failed assertion, an uncaught C++ exception or a runtime abort";
    case 7:
        return "bus error, e.g. a truncated memory-mapped file or /dev/shm exhausted";
    case 8:
        return "arithmetic exception, e.g. an integer division by zero";
    case 9:
        return "killed";
    case 11:
        return "segmentation fault";
    case 13:
        return "broken pipe";
    case 15:
        return "terminated";
    case 24:
        return "CPU time limit exceeded";
    case 25:
        return "file size limit exceeded";
    case 31:
        return "bad system call, e.g. blocked by seccomp";
    default:
        return NULL;
    }
}

static const struct pattern gpu_oom_patterns[] = {
    {"cuda out of memory", NULL},
    {"cuda error: out of memory", NULL},
    {"cuda_error_out_of_memory", NULL},
    {"cudaerrormemoryallocation", NULL},
    {"torch.outofmemoryerror", NULL},
    {"torch.cuda.outofmemoryerror", NULL},
    {"hip out of memory", NULL},
    {"cuda oom", NULL},
    {"cudamalloc", "out of memory"},
    {"resource_exhausted: out of memory", NULL},
    {"oom when allocating tensor", "gpu"},
    {"cublas_status_alloc_failed", NULL},
    {"cudnn_status_alloc_failed", NULL},
    {"no available memory for the cache blocks", NULL},
    {"out of memory", "cuda"},
    {"out of memory", "gpu"},
    {"ran out of memory", "gpu"},
};

static const struct pattern gpu_error_patterns[] = {
    {"no cuda-capable device is detected", NULL},
    {"no cuda gpus are available", NULL},
    {"found no nvidia driver", NULL},
    {"driver/library version mismatch", NULL},
    {"cuda driver version is insufficient", NULL},
    {"cudaerrorinsufficientdriver", NULL},
    {"cuda_error_no_device", NULL},
    {"cudaerrornodevice", NULL},
    {"cuda_error_system_driver_mismatch", NULL},
    {"cudaerrorsystemdrivermismatch", NULL},
    {"uncorrectable ecc error", NULL},
    {"cuda_error_ecc_uncorrectable", NULL},
    {"cudaerroreccuncorrectable", NULL},
    {"fallen off the bus", NULL},
    {"gpu is lost", NULL},
    {"gpu_is_lost", NULL},
    {"cudaerrordevicesunavailable", NULL},
    {"cuda_error_devices_unavailable", NULL},
    {"busy or unavailable", "cuda"},
    {"busy or unavailable", "gpu"},
    {"failed to initialize nvml", NULL},
    {"could not load nvml library", NULL},
    {"nvml_error_library_not_found", NULL},
    {"libnvidia-ml.so", "cannot open"},
    {"libnvidia-ml.so", "not found"},
    {"couldn't communicate with the nvidia driver", NULL},
    {"nvidia-smi has failed", NULL},
    {"unable to determine the device handle for gpu", NULL},
    {"forward compatibility was attempted on non supported hw", NULL},
};

/* Collective communication between GPUs failing (NVIDIA NCCL, and AMD's
 * RCCL, which keeps NCCL's messages): NCCL's result codes as its callers
 * print them ("NCCL error in: ...ProcessGroupNCCL.cpp:..., unhandled system
 * error", "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for
 * details)", "NCCL Error 2: unhandled system error"), the result code
 * names (ncclSystemError, ncclInternalError, ncclRemoteError,
 * ncclUnhandledCudaError, ncclInvalidUsage), NCCL's own warning lines
 * ("... NCCL WARN Call to connect returned Connection refused") and
 * PyTorch's watchdog on a collective that never completed. Searched in the
 * tail only: NCCL warns about recoverable things in long runs too. */
static const struct pattern nccl_patterns[] = {
    {"nccl error", NULL},
    {"ncclsystemerror", NULL},
    {"ncclinternalerror", NULL},
    {"ncclremoteerror", NULL},
    {"ncclunhandledcudaerror", NULL},
    {"ncclinvalidusage", NULL},
    {"ncclinvalidargument", NULL},
    {"watchdog caught collective operation timeout", NULL},
    {"nccl warn", NULL},
};

/* Language runtimes giving up at their own heap limit. */
static const struct pattern app_oom_patterns[] = {
    {"javascript heap out of memory", NULL},
    {"reached heap limit", NULL},
    {"java.lang.outofmemoryerror", NULL},
    {"terminating due to java.lang.outofmemoryerror", NULL},
    {"fatal error: runtime: out of memory", NULL},
    {"runtime: out of memory", NULL},
    {"system.outofmemoryexception", NULL},
    {"nomemoryerror", NULL},
    {"allowed memory size of", "exhausted"}, /* PHP */
};

static const struct pattern segv_patterns[] = {
    {"segmentation fault", NULL},
};

static const struct pattern sigill_patterns[] = {
    {"illegal instruction", NULL},
    {"compiled to use avx", NULL}, /* TensorFlow's CPU feature check */
    {"instructions, but these aren't available", NULL},
};

static const struct pattern abort_patterns[] = {
    {"double free", NULL},
    {"free(): invalid", NULL},
    {"malloc(): ", NULL},
    {"corrupted size vs. prev_size", NULL},
    {"stack smashing detected", NULL},
    {"terminate called after throwing", NULL},
    {"terminate called without an active exception", NULL},
    {"assertion `", "failed"},
    {"assertion failed", NULL},
    {"aborted (core dumped)", NULL},
    {"sigabrt", NULL},
};

/* Python's MemoryError: the exception name opens the last line of a traceback. */
static int find_python_memory_error(struct dctx *x)
{
    struct tail *t;
    size_t i;
    int found = 0;

    if (x->log == NULL) {
        return 0;
    }
    t = krc_malloc(sizeof(*t));
    if (t == NULL) {
        return 0;
    }
    krc_diag_collect_tail(x->log, x->log_len, KRC_DIAG_TAIL_LINES, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = krc_diag_strip_ts(t->lines[i - 1]);
        if (starts_with(l.p, l.len, "MemoryError") &&
            (l.len == 11 || l.p[11] == ':' || l.p[11] == ' ' || l.p[11] == '\r')) {
            memset(&x->h, 0, sizeof(x->h));
            x->h.found = 1;
            x->h.line = t->lines[i - 1];
            x->h.at = (size_t)(l.p - t->lines[i - 1].p);
            x->where = "log";
            found = 1;
        }
    }
    krc_free(t);
    return found;
}

/* 12. gpu_out_of_memory */
int krc_diag_match_gpu_oom(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    return failed_or_unknown(x) &&
           krc_diag_find_text(x, gpu_oom_patterns, NPAT(gpu_oom_patterns), IN_LOG | IN_MSG);
}

static void s_text_cause(struct dctx *x, struct builder *b, struct krc_buf *s, const char *what)
{
    char line[200];

    krc_diag_hit_short(x, line, sizeof(line));
    krc_buf_printf(s, "Container %s %s and ", x->c->name, what);
    krc_diag_say_exited(x, s);
    krc_diag_say_after(x, s);
    krc_diag_quote_clean(s, " (", line, ")");
    krc_diag_evidence_hit(b, x);
}

void krc_diag_say_gpu_oom(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "ran out of GPU memory");
}

/* 13. app_out_of_memory */
int krc_diag_match_app_oom(struct dctx *x)
{
    if (!failed_or_unknown(x)) {
        return 0;
    }
    x->conf = x->has_exit && (x->exit_code == 137 || x->exit_code == 143) ? KRC_CONFIDENCE_MEDIUM
                                                                          : KRC_CONFIDENCE_HIGH;
    x->ev = NULL;
    if (krc_diag_find_text(x, app_oom_patterns, NPAT(app_oom_patterns), IN_MSG | IN_LOG_TAIL)) {
        /* "OutOfMemoryError: unable to create native thread" is a thread limit */
        return !krc_diag_has_ci(x->h.line.p, x->h.line.len, "native thread");
    }
    return find_python_memory_error(x);
}

void krc_diag_say_app_oom(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "hit its language runtime's own heap limit");
    krc_diag_advise_app_oom(x, b);
}

/* 14-16. fatal signals: the exit code names the signal; a log line alone
 * counts only when the exit code names no other signal. */
static int m_signal(struct dctx *x, int signo, const struct pattern *pats, size_t n)
{
    int text;

    x->ev = NULL;
    if (x->signal == signo) {
        text = krc_diag_find_text(x, pats, n, IN_MSG | IN_LOG_TAIL);
        x->conf = text ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    if ((!x->has_exit || x->exit_code != 0) && x->signal == 0 &&
        !(x->has_exit && (x->exit_code == 137 || x->exit_code == 143)) &&
        krc_diag_find_text(x, pats, n, IN_MSG | IN_LOG_TAIL)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        return 1;
    }
    return 0;
}

int krc_diag_match_segfault(struct dctx *x)
{
    return m_signal(x, 11, segv_patterns, NPAT(segv_patterns));
}

int krc_diag_match_sigill(struct dctx *x)
{
    static const struct pattern cpu_check[] = {
        {"compiled to use avx", NULL},
        {"instructions, but these aren't available", NULL},
    };

    if (m_signal(x, 4, sigill_patterns, NPAT(sigill_patterns))) {
        return 1;
    }
    /* A library that checks the CPU first and then calls abort() (exit 134). */
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return failed_or_unknown(x) && !(x->has_exit && (x->exit_code == 137 || x->exit_code == 143)) &&
           krc_diag_find_text(x, cpu_check, NPAT(cpu_check), IN_MSG | IN_LOG_TAIL);
}

int krc_diag_match_abort(struct dctx *x)
{
    return m_signal(x, 6, abort_patterns, NPAT(abort_patterns));
}

static void s_signal(struct dctx *x, struct builder *b, struct krc_buf *s, const char *what)
{
    char line[200];

    krc_buf_printf(s, "Container %s %s (", x->c->name, what);
    krc_diag_say_exit(x, s);
    krc_buf_append_str(s, ")");
    krc_diag_say_after(x, s);
    if (x->h.found) {
        krc_diag_hit_short(x, line, sizeof(line));
        krc_diag_quote_clean(s, ": ", line, "");
        krc_diag_evidence_hit(b, x);
    }
}

void krc_diag_say_segfault(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_signal(x, b, s, "crashed with a segmentation fault");
}

void krc_diag_say_sigill(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->signal != 4 && x->h.found &&
        !krc_diag_has_ci(x->h.line.p, x->h.line.len, "illegal instr")) {
        s_signal(x, b, s, "stopped after reporting a CPU instruction set the node lacks");
        return;
    }
    s_signal(x, b, s,
             "died on an illegal instruction (SIGILL: usually a CPU feature, e.g. AVX, that "
             "the node lacks)");
}

void krc_diag_say_abort(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_signal(x, b, s, "aborted (SIGABRT: a failed assertion, abort() or heap corruption)");
}

/* 17. gpu_error */
int krc_diag_match_gpu_error(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    if (!failed_or_unknown(x)) {
        return 0;
    }
    x->detail = NULL;
    if (krc_diag_find_text(x, gpu_error_patterns, NPAT(gpu_error_patterns), IN_LOG | IN_MSG)) {
        return 1;
    }
    /* medium: a collective fails on every rank when one rank or the
     * network between them fails, so the fault may not be this pod's */
    if (krc_diag_find_text(x, nccl_patterns, NPAT(nccl_patterns), IN_LOG_TAIL | IN_MSG)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->detail = "nccl";
        return 1;
    }
    memset(&x->h, 0, sizeof(x->h));
    if (x->log != NULL && krc_diag_find_xid(x->log, x->log_len, &x->h)) {
        x->where = "log";
        return 1;
    }
    if (x->msg != NULL && krc_diag_find_xid(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    return 0;
}

void krc_diag_say_gpu_error(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (str_eq(x->detail, "nccl")) {
        s_text_cause(x, b, s,
                     "hit a collective-communication failure between GPUs or ranks (NCCL)");
        snprintf(x->next, sizeof(x->next), "%s",
                 "Read the NCCL WARN lines before the error (run with NCCL_DEBUG=INFO): check "
                 "the network between the ranks (NCCL_SOCKET_IFNAME, the RDMA/InfiniBand "
                 "devices), the size of /dev/shm (an emptyDir with medium Memory) and whether "
                 "another rank or pod failed first");
        return;
    }
    s_text_cause(x, b, s, "hit a GPU device or driver error");
}

/* 18. dependency_unreachable */
int krc_diag_match_dependency(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_MEDIUM;
    x->ev = NULL;
    memset(&x->h, 0, sizeof(x->h));
    if (!failed_or_unknown(x)) {
        return 0;
    }
    if (x->log != NULL && krc_diag_find_dependency(x->log, x->log_len, &x->h)) {
        x->where = "log";
        return 1;
    }
    if (x->msg != NULL && krc_diag_find_dependency(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    return 0;
}

void krc_diag_say_dependency(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "gave up because a network dependency could not be reached");
}

/* 19. app_error */
int krc_diag_match_app_error(struct dctx *x)
{
    const unsigned char *src = NULL; /* the text holding the error line */
    size_t src_len = 0;
    int line;

    x->ev = NULL;
    memset(&x->h, 0, sizeof(x->h));
    if (x->log != NULL && krc_diag_find_error_line(x->log, x->log_len, &x->h)) {
        x->where = "log";
        src = x->log;
        src_len = x->log_len;
    } else if (x->msg != NULL && krc_diag_find_error_line(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        src = x->msg;
        src_len = x->msg_len;
    }
    line = src != NULL;
    if (x->has_exit && x->exit_code != 0 && x->exit_code != 137 && x->exit_code != 143) {
        x->conf = line ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    /* No exit code: a crash header ending the log is the best there is;
     * or, for a container that shows it restarted (CrashLoopBackOff, a
     * restart count, a previous state), an error as the very last line the
     * previous instance wrote. */
    x->conf = KRC_CONFIDENCE_LOW;
    if (x->has_exit || !line) {
        return 0;
    }
    /* An error-level record (Rust's tracing or env_logger, klog, logfmt)
     * as the very last line of an instance that terminated: the program
     * logged its error and exited. */
    return krc_diag_is_error_header(x->h.line) ||
           ((str_eq(x->c->state_reason, "CrashLoopBackOff") || x->c->restart_count > 0 ||
             x->c->last.present) &&
            krc_diag_is_last_line(src, src_len, x->h.line)) ||
           (x->t != NULL && krc_diag_is_error_level(x->h.line) &&
            krc_diag_is_last_line(src, src_len, x->h.line));
}

void krc_diag_say_app_error(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const char *meaning = signal_meaning(x->signal);
    char line[200];

    if (!x->has_exit) {
        krc_buf_printf(s, "Container %s stopped (exit code unknown)", x->c->name);
    } else if (x->signal_name != NULL) {
        krc_buf_printf(s, "Container %s died from %s (exit %d%s%s)", x->c->name, x->signal_name,
                       x->exit_code, meaning ? ": " : "", meaning ? meaning : "");
    } else {
        krc_buf_printf(s, "Container %s exited with code %d", x->c->name, x->exit_code);
    }
    krc_diag_say_after(x, s);
    if (x->h.found) {
        char lead[64];
        krc_diag_hit_short(x, line, sizeof(line));
        snprintf(lead, sizeof(lead), "; the %s ends with: ", x->where);
        krc_diag_quote_clean(s, lead, line, "");
        krc_diag_evidence_hit(b, x);
    }
    krc_diag_advise_missing(x, b);
}
