/* The `krc demo` scenario table and the Kubernetes objects built from it.
 * Every failure fact here is copied from a case of tests/fixtures (see the
 * comment of each case and docs/demo.md); names of pods, nodes and images
 * that a case did not post, times and restart counts are the simulation's. */
#include "krc/demo/scenario.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"

/* realworld/103-event-streams-zookeeper-oomkilled/logs.txt */
static const char LOG_ZOOKEEPER[] =
    "Wrote ZooKeeper configuration file to /var/lib/zookeeper/conf/zoo.cfg\n"
    "Creating ZooKeeper log4j configuration\n"
    "Wrote log4j configuration to /var/lib/zookeeper/conf/log4j.properties\n"
    "Creating JVM configuration file\n"
    "Wrote JVM configuration to /var/lib/zookeeper/conf/java.env\n"
    "ZooKeeper JMX enabled by default\n"
    "Using config: /var/lib/zookeeper/conf/zoo.cfg\n"
    "[WARN  tini (1)] Reaped zombie process with pid=38\n";

/* realworld/094-astronomer-worker-readonly-fs/logs.txt */
static const char LOG_AIRFLOW[] =
    "Unable to load the config, contains a configuration error.\n"
    "Traceback (most recent call last):\n"
    "  File \"/usr/lib/python3.6/logging/config.py\", line 558, in configure\n"
    "    handler = self.configure_handler(handlers[name])\n"
    "  File \"/usr/lib/python3.6/logging/config.py\", line 731, in configure_handler\n"
    "    result = factory(**kwargs)\n"
    "  File \"/usr/lib/python3.6/site-packages/airflow/utils/log/file_processor_handler.py\", line "
    "48, in __init__\n"
    "    os.makedirs(self._get_log_directory())\n"
    "  File \"/usr/lib/python3.6/os.py\", line 210, in makedirs\n"
    "    makedirs(head, mode, exist_ok)\n"
    "  File \"/usr/lib/python3.6/os.py\", line 220, in makedirs\n"
    "    mkdir(name, mode)\n"
    "OSError: [Errno 30] Read-only file system: '/usr/local/airflow/logs/scheduler'\n";

/* corpus/09-llama-finetune-cuda-oom/logs.txt without its progress-bar lines */
static const char LOG_TRAINER[] =
    "2025-02-06 03:14:40,245 - INFO - __main__ - Loading model from /models/llama-3.1-8b (bf16, "
    "attn_implementation=sdpa)\n"
    "2025-02-06 03:14:55,245 - INFO - __main__ - trainable params: 167,772,160 || all params: "
    "8,198,033,408 || trainable%: 2.0465\n"
    "2025-02-06 03:14:58,245 - INFO - __main__ - Dataset: 38,400 examples, max_seq_len=8192, "
    "packing=False\n"
    "2025-02-06 03:15:05,245 - INFO - transformers.trainer - ***** Running training *****\n"
    "2025-02-06 03:15:05,245 - INFO - transformers.trainer -   Num examples = 38,400\n"
    "2025-02-06 03:15:05,245 - INFO - transformers.trainer -   Num Epochs = 1\n"
    "2025-02-06 03:15:05,245 - INFO - transformers.trainer -   Instantaneous batch size per device "
    "= 8\n"
    "2025-02-06 03:15:05,245 - INFO - transformers.trainer -   Total optimization steps = 4,800\n"
    "Traceback (most recent call last):\n"
    "  File \"/app/train.py\", line 212, in <module>\n"
    "    main()\n"
    "  File \"/app/train.py\", line 205, in main\n"
    "    trainer.train(resume_from_checkpoint=args.resume)\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/transformers/trainer.py\", line 2123, in "
    "train\n"
    "    return inner_training_loop(\n"
    "           ^^^^^^^^^^^^^^^^^^^^\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/transformers/trainer.py\", line 2481, in "
    "_inner_training_loop\n"
    "    tr_loss_step = self.training_step(model, inputs, num_items_in_batch)\n"
    "                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/transformers/trainer.py\", line 3612, in "
    "training_step\n"
    "    self.accelerator.backward(loss, **kwargs)\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/accelerate/accelerator.py\", line 2241, in "
    "backward\n"
    "    loss.backward(**kwargs)\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/torch/_tensor.py\", line 581, in backward\n"
    "    torch.autograd.backward(\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/torch/autograd/__init__.py\", line 347, in "
    "backward\n"
    "    _engine_run_backward(\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/torch/autograd/graph.py\", line 825, in "
    "_engine_run_backward\n"
    "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the "
    "backward pass\n"
    "           "
    "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total "
    "capacity of 79.25 GiB of which 2.18 GiB is free. Process 4012887 has 77.06 GiB memory in use. "
    "Of the allocated memory 71.52 GiB is allocated by PyTorch, and 4.83 GiB is reserved by "
    "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";

/* realworld/119-backstage-backend-econnrefused-postgres/logs.txt */
static const char LOG_BACKSTAGE[] =
    "Backend failed to start up Error: connect ECONNREFUSED 10.60.3.239:5432\n"
    "    at TCPConnectWrap.afterConnect [as oncomplete] (net.js:1141:16) {\n"
    "  errno: 'ECONNREFUSED',\n"
    "  code: 'ECONNREFUSED',\n"
    "  syscall: 'connect',\n"
    "  address: '10.60.3.239',\n"
    "  port: 5432\n"
    "}\n";

/* realworld/018-liveness-image-http-500 (events as posted, one kill's worth:
 * three failures of the default failureThreshold, then the kill). */
static const struct krc_demo_event EV_LIVENESS[] = {
    {"Normal", "Pulled", "Successfully pulled image \"k8s.gcr.io/liveness\" in 1.441853718s",
     "kubelet", 1, -40, -40},
    {"Warning", "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500",
     "kubelet", 3, -21, -1},
    {"Normal", "Killing", "Container liveness failed liveness probe, will be restarted", "kubelet",
     1, -1, -1},
};

/* realworld/066-lightspeed-args-without-entrypoint-starterror: the StartError message as
 * posted. */
#define ARGS_NOT_FOUND                                                                             \
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "    \
    "runc create failed: unable to start container process: error during container init: exec: "   \
    "\"-c\": executable file not found in $PATH"
static const struct krc_demo_event EV_ARGS_NOT_FOUND[] = {
    {"Normal", "Scheduled", "Successfully assigned llm/lightspeed-core-85b57d9576-bdz6c to gpu1",
     "default-scheduler", 1, -5, -5},
};

/* realworld/083-argo-configmap-subpath-starterror-128: the StartError message as posted. */
#define SUBPATH_MOUNT                                                                              \
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "    \
    "runc create failed: unable to start container process: error during container init: error "   \
    "mounting \"/var/lib/kubelet/pods/f22aa0b7-afdc-497c-beb3-ccb394e8428d/volume-subpaths/"       \
    "config/wait/9\" to rootfs at \"/mainctrfs/my.py\": mount /var/lib/kubelet/pods/"              \
    "f22aa0b7-afdc-497c-beb3-ccb394e8428d/volume-subpaths/my-py/wait/9:/mainctrfs/my.py (via "     \
    "/proc/self/fd/6), flags: 0x5001, data: context=\"system_u:object_r:data_t:s0:c923,c1020\": "  \
    "no such file or directory: unknown"

/* The simulation's own rollout before the missing-binary crash (the case
 * does not say what changed before it; docs/demo.md), consistent with the
 * case: the image (lightspeed-stack at 8e24e8b, 2025-07-08) starts with CMD
 * ["python3.12", "src/lightspeed_stack.py"] (its Containerfile until PR 227
 * made it the ENTRYPOINT), and Kubernetes args replace the CMD. The previous
 * revision's args were that command itself (the application started, with
 * its default configuration file); the new one passes only the case's
 * "-c /app-config/lightspeed-stack.yaml", so runc execs "-c". The hash, the
 * time (4 min before the demo) and the manager are the demo's. */
static const struct krc_demo_rollout ROLLOUT_LIGHTSPEED = {
    .prev_hash = "5c8f7b9d64",
    .prev_args_json = "[\"python3.12\",\"src/lightspeed_stack.py\"]",
    .before_s = 240,
    .manager = "kubectl-client-side-apply",
};

/* The storm: the node controller's texts when a node stops posting status. */
static const struct krc_demo_event EV_NODE_NOT_READY[] = {
    {"Warning", "NodeNotReady", "Node is not ready", "node-controller", 1, -6, -6},
};

/* Field demonstrations (issue 26). Not public crash cases: no public report
 * of these fields with a crash was found, so each pod is composed from the
 * field definitions of the Kubernetes API reference (core/v1), the KEP that
 * added the field and the release it appeared in, in the shape of the
 * composed pods of tests/fixtures/k8s-1.35 (README.md there). The terminal
 * and docs/demo.md label them as such; names, images, times, exit codes and
 * log lines are the demo's own. */
#define KEP_5307                                                                                   \
    "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/"                        \
    "5307-container-restart-policy"
#define KEP_5532                                                                                   \
    "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/"                        \
    "5532-restart-all-containers-on-container-exits"
#define KEP_4680                                                                                   \
    "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/"                        \
    "4680-add-resource-health-to-pod-status"
#define KEP_2837                                                                                   \
    "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/"                        \
    "2837-pod-level-resource-spec"

/* composed: the step's own words for the exit its rule retries */
static const char LOG_RETRY[] =
    "loader: upstream partition not published yet; exiting 42 (retry)\n";

/* composed, in PyTorch's words for a CUDA error (cudaErrorECCUncorrectable) */
static const char LOG_ECC[] =
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n";

static const char *const INFER_OTHERS[] = {"tokenizer", "metrics", "cache", NULL};

static const struct krc_demo_case CASES[] = {
    {.key = "oom",
     .what = "the kernel OOM-kills ZooKeeper's JVM (exit 137, OOMKilled)",
     .source = "https://github.com/IBM/event-streams/issues/7",
     .fixture = "tests/fixtures/realworld/103-event-streams-zookeeper-oomkilled",
     .ns = "event-streams",
     .pod = "es-zookeeper-0",
     .container = "zookeeper",
     .image = "ibmcom/eventstreams-zookeeper",
     .node = "worker-1",
     .t_reason = "OOMKilled",
     .exit_code = 137,
     .run_s = 1800,
     .log = LOG_ZOOKEEPER,
     .replicas = 1,
     .owner_api = "apps/v1",
     .owner_kind = "StatefulSet",
     .owner_name = "es-zookeeper",
     .expect = "oom_killed"},
    {.key = "liveness",
     .what = "the kubelet kills a container whose liveness probe gets HTTP 500",
     .source = "https://github.com/kubernetes/kubernetes/issues/110595",
     .fixture = "tests/fixtures/realworld/018-liveness-image-http-500",
     .ns = "test",
     .pod = "liveness-rc-rlchs",
     .container = "liveness",
     .image = "k8s.gcr.io/liveness",
     .node = "compute-3",
     /* as posted, with the defaults the API server fills in */
     .liveness = "{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\","
                 "\"httpHeaders\":[{\"name\":\"Custom-Header\",\"value\":\"Awesome\"}]},"
                 "\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,"
                 "\"failureThreshold\":3}",
     /* not posted: a process ended by the kubelet's SIGTERM exits 143 */
     .t_reason = "Error",
     .exit_code = 143,
     .run_s = 40,
     .events = EV_LIVENESS,
     .n_events = sizeof(EV_LIVENESS) / sizeof(EV_LIVENESS[0]),
     .replicas = 1,
     /* the case's pod name is a ReplicationController's NAME-SUFFIX */
     .owner_api = "v1",
     .owner_kind = "ReplicationController",
     .owner_name = "liveness-rc",
     .expect = "liveness_probe_failed"},
    {.key = "traceback",
     .what = "an Airflow worker dies with a Python traceback (read-only file system)",
     .source = "https://github.com/astronomerio/astronomer-ee/issues/113",
     .fixture = "tests/fixtures/realworld/094-astronomer-worker-readonly-fs",
     .ns = "astronomer",
     .pod = "airflow-worker-0",
     .container = "worker",
     .image = "astronomerinc/ap-airflow",
     .node = "worker-2",
     /* not posted: Python exits 1 on an uncaught exception */
     .t_reason = "Error",
     .exit_code = 1,
     .run_s = 6,
     .log = LOG_AIRFLOW,
     .replicas = 1,
     /* "a pod is stuck in a crash loop": it crashes again after each back-off */
     .restarts = 3,
     .owner_api = "apps/v1",
     .owner_kind = "StatefulSet",
     .owner_name = "airflow-worker",
     .expect = "app_error"},
    {.key = "cuda-oom",
     .what = "a fine-tuning job runs out of GPU memory (torch CUDA out of memory)",
     .source = "the project's diagnosis corpus (no public source)",
     .fixture = "tests/fixtures/corpus/09-llama-finetune-cuda-oom",
     .ns = "ml-training",
     .pod = "llama-ft-sweep-lr3e5-7xkq2",
     .container = "trainer",
     .image = "harbor.corp.example.net/ml/llm-finetune:0.7.3",
     .node = "gpu-a100-07",
     .resources = "{\"limits\":{\"cpu\":\"12\",\"memory\":\"96Gi\",\"nvidia.com/gpu\":\"1\"},"
                  "\"requests\":{\"cpu\":\"12\",\"memory\":\"96Gi\",\"nvidia.com/gpu\":\"1\"}}",
     .t_reason = "Error",
     .exit_code = 1,
     .run_s = 426,
     .log = LOG_TRAINER,
     .replicas = 1,
     /* the case's pod crashed the same way again (restartCount 2, BackOff x3) */
     .restarts = 3,
     /* the case's pod.json: owned by its Job, restartPolicy OnFailure */
     .restart_policy = "OnFailure",
     .owner_api = "batch/v1",
     .owner_kind = "Job",
     .owner_name = "llama-ft-sweep-lr3e5",
     .expect = "gpu_out_of_memory"},
    {.key = "missing-binary",
     .what = "Kubernetes args replace the image's CMD: runc cannot find \"-c\"",
     .source = "https://github.com/lightspeed-core/lightspeed-stack/issues/226",
     .fixture = "tests/fixtures/realworld/066-lightspeed-args-without-entrypoint-starterror",
     .ns = "llm",
     .pod = "lightspeed-core-85b57d9576-bdz6c",
     .container = "lightspeed-core",
     .image = "quay.io/lightspeed-core/lightspeed-stack:dev-20250708-8e24e8b",
     .node = "gpu1",
     .t_reason = "StartError",
     .exit_code = 128,
     .t_message = ARGS_NOT_FOUND,
     .events = EV_ARGS_NOT_FOUND,
     .n_events = sizeof(EV_ARGS_NOT_FOUND) / sizeof(EV_ARGS_NOT_FOUND[0]),
     .replicas = 1,
     /* the case's pod name is a Deployment's ReplicaSet NAME-HASH-SUFFIX */
     .owner_api = "apps/v1",
     .owner_kind = "ReplicaSet",
     .owner_name = "lightspeed-core-85b57d9576",
     .expect = "command_not_found",
     /* the case's pod.yaml */
     .args_json = "[\"-c\",\"/app-config/lightspeed-stack.yaml\"]",
     .rollout = &ROLLOUT_LIGHTSPEED},
    {.key = "start-failure",
     .what = "runc cannot mount a ConfigMap subPath that is being replaced (StartError)",
     .source = "https://github.com/kubernetes/kubernetes/issues/124308",
     .fixture = "tests/fixtures/realworld/083-argo-configmap-subpath-starterror-128",
     .ns = "argo",
     .pod = "my-py-workflow-4181571205",
     .container = "wait",
     .image = "quay.io/argoproj/argoexec",
     .node = "worker-1",
     .t_reason = "StartError",
     .exit_code = 128,
     .t_message = SUBPATH_MOUNT,
     .replicas = 1,
     /* an Argo Workflow's step pod */
     .owner_api = "argoproj.io/v1alpha1",
     .owner_kind = "Workflow",
     .owner_name = "my-py-workflow",
     .expect = "start_failed"},
    {.key = "db-unreachable",
     .what = "Backstage cannot reach its PostgreSQL (connect ECONNREFUSED)",
     .source = "https://github.com/backstage/backstage/issues/2892",
     .fixture = "tests/fixtures/realworld/119-backstage-backend-econnrefused-postgres",
     .ns = "backstage",
     .pod = "backstage-backend-6d9c7b8f5-x2lqp",
     .container = "backend",
     .image = "backstage/backend",
     .node = "worker-1",
     /* not posted: Node.js exits 1 when start-up fails */
     .t_reason = "Error",
     .exit_code = 1,
     .run_s = 3,
     .log = LOG_BACKSTAGE,
     .replicas = 1,
     .owner_api = "apps/v1",
     .owner_kind = "ReplicaSet",
     .owner_name = "backstage-backend-6d9c7b8f5",
     .expect = "dependency_unreachable"},
    {.key = "node-storm",
     .what = "a 1 GiB node runs out of memory and goes NotReady: 8 memcached pods restart",
     .source = "https://github.com/kubernetes/kubernetes/issues/53669",
     .fixture = "tests/fixtures/realworld/062-memcached-system-oom-exit137-error",
     .ns = "cache",
     .pod = "memcached",
     .container = "memcached",
     .image = "memcached:1.5",
     .node = "small-1gb-3",
     .resources = "{\"limits\":{\"memory\":\"500M\"},\"requests\":{\"memory\":\"10M\"}}",
     .t_reason = "Error",
     .exit_code = 137,
     .run_s = 1281, /* 17:20:37 -> 17:41:58 as posted */
     .events = EV_NODE_NOT_READY,
     .n_events = sizeof(EV_NODE_NOT_READY) / sizeof(EV_NODE_NOT_READY[0]),
     .replicas = 8,
     .owner_api = "apps/v1",
     .owner_kind = "StatefulSet",
     .owner_name = "memcached",
     /* what the case's files give; the demo's node goes NotReady first, and the
      * alerts say node_not_ready (tests/integration/test_demo.py) */
     .expect = "killed"},
    {.key = "restart-rule",
     .what = "a batch step exits 42, which its container restart rule retries: recorded, "
             "not paged",
     .field = "containers[].restartPolicy + restartPolicyRules (KEP-5307: alpha in 1.34, beta "
              "in 1.35)",
     .source = KEP_5307,
     .fixture = "tests/fixtures/k8s-1.35/pod-restart-fields.json",
     .ns = "batch",
     .pod = "etl-shard-3-q8v2n",
     .container = "loader",
     .image = "registry.local/etl-loader:3.1",
     .node = "worker-2",
     /* ContainerRestartRule {action, exitCodes {operator In|NotIn, values}} */
     .pod_spec_json = "{\"restartPolicy\":\"Never\"}",
     .container_spec_json = "{\"restartPolicy\":\"Never\",\"restartPolicyRules\":[{\"action\":"
                            "\"Restart\",\"exitCodes\":{\"operator\":\"In\",\"values\":[42]}}]}",
     .t_reason = "Error",
     .exit_code = 42,
     .run_s = 95,
     .log = LOG_RETRY,
     .replicas = 1,
     .owner_api = "batch/v1",
     .owner_kind = "Job",
     .owner_name = "etl-shard-3",
     .running_after = 1,
     .step = 8,
     .expect = "restart_rule"},
    {.key = "restart-all",
     .what = "an inference server exits 88, which its rule answers by restarting all 4 "
             "containers: one alert",
     .field = "restartPolicyRules action RestartAllContainers, condition AllContainersRestarting "
              "(KEP-5532: alpha in 1.35, beta in 1.36)",
     .source = KEP_5532,
     .fixture = "tests/fixtures/k8s-1.35/restart-all.json",
     .ns = "inference",
     .pod = "infer-0",
     .container = "server",
     .image = "registry.local/infer-server:1.4",
     .node = "worker-1",
     .container_spec_json = "{\"restartPolicyRules\":[{\"action\":\"RestartAllContainers\","
                            "\"exitCodes\":{\"operator\":\"In\",\"values\":[88]}}]}",
     .others = INFER_OTHERS,
     .others_restart = 1,
     /* True while the kubelet restarts them, False after (KEP-5532) */
     .conditions_json = "[{\"type\":\"AllContainersRestarting\",\"status\":\"False\"}]",
     .t_reason = "Error",
     .exit_code = 88,
     .run_s = 5400,
     .replicas = 1,
     .owner_api = "apps/v1",
     .owner_kind = "StatefulSet",
     .owner_name = "infer",
     .running_after = 1,
     .step = 8,
     /* the trigger keeps its own cause: exit 88, no log */
     .expect = "app_error"},
    {.key = "gpu-unhealthy",
     .what = "a GPU inference pod crashes with a CUDA ECC error; the kubelet reports its GPU "
             "Unhealthy",
     .field = "containerStatuses[].allocatedResourcesStatus (KEP-4680: alpha in 1.31, beta in "
              "1.36)",
     .source = KEP_4680,
     .fixture = "tests/fixtures/k8s-1.35/pod-restart-fields.json",
     .ns = "ml-serving",
     .pod = "vllm-0",
     .container = "vllm",
     .image = "vllm/vllm-openai:v0.6.3",
     .node = "gpu-a100-07",
     .resources = "{\"limits\":{\"nvidia.com/gpu\":\"1\"},\"requests\":{\"cpu\":\"8\","
                  "\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"1\"}}",
     /* ResourceStatus {name, resources[] ResourceHealth {resourceID, health, message}} */
     .crashed_status_json =
         "{\"allocatedResourcesStatus\":[{\"name\":\"nvidia.com/gpu\",\"resources\":[{"
         "\"resourceID\":\"GPU-5a1e0b7c-2f3d-4e8a-9b6c-0d1e2f3a4b5c\",\"health\":\"Unhealthy\","
         "\"message\":\"ECC error count exceeded threshold\"}]}]}",
     .t_reason = "Error",
     .exit_code = 1,
     .run_s = 7200,
     .log = LOG_ECC,
     .replicas = 1,
     .owner_api = "apps/v1",
     .owner_kind = "StatefulSet",
     .owner_name = "vllm",
     .step = 8,
     .expect = "gpu_device_unhealthy"},
    {.key = "pod-level-oom",
     .what = "a container with no memory limit of its own is OOM-killed under the pod's limit",
     .field = "spec.resources, pod-level (KEP-2837: alpha in 1.32, beta in 1.34)",
     .source = KEP_2837,
     .fixture = "tests/fixtures/k8s-1.35/pod-restart-fields.json",
     .ns = "analytics",
     .pod = "report-builder-7c9d5f6b8-m4tqz",
     .container = "builder",
     .image = "registry.local/report-builder:5.2",
     .node = "worker-2",
     .pod_spec_json = "{\"resources\":{\"limits\":{\"memory\":\"2Gi\"},\"requests\":{"
                      "\"memory\":\"2Gi\"}}}",
     .t_reason = "OOMKilled",
     .exit_code = 137,
     .run_s = 340,
     .replicas = 1,
     .owner_api = "apps/v1",
     .owner_kind = "ReplicaSet",
     .owner_name = "report-builder-7c9d5f6b8",
     .step = 8,
     .expect = "oom_killed"},
};

static const struct krc_demo_node NODES[] = {
    {"worker-1", 0, 16},      {"worker-2", 0, 16}, {"compute-3", 0, 32},
    {"gpu-a100-07", 8, 1947}, /* corpus/09's node.json: 8 GPUs, 2041519517Ki */
    {"gpu1", 0, 64},          /* realworld/066: its GPUs were not posted */
    {"small-1gb-3", 0, 1},    /* realworld/062: "1GB nodes" */
};

const struct krc_demo_case *krc_demo_cases(size_t *ret_n)
{
    *ret_n = sizeof(CASES) / sizeof(CASES[0]);
    return CASES;
}

const struct krc_demo_node *krc_demo_nodes(size_t *ret_n)
{
    *ret_n = sizeof(NODES) / sizeof(NODES[0]);
    return NODES;
}

const struct krc_demo_node *krc_demo_node_named(const char *name)
{
    for (size_t i = 0; i < sizeof(NODES) / sizeof(NODES[0]); i++) {
        if (strcmp(NODES[i].name, name) == 0) {
            return &NODES[i];
        }
    }
    return NULL;
}

const char *krc_demo_storm_node(void)
{
    return "small-1gb-3";
}

/* FNV-1a over the parts, for stable identifiers. */
static uint64_t fnv(const char *a, const char *b, int n)
{
    uint64_t h = 1469598103934665603ULL;
    const char *parts[2] = {a, b};

    for (int k = 0; k < 2; k++) {
        for (const char *p = parts[k]; p != NULL && *p != '\0'; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        }
        h = (h ^ '/') * 1099511628211ULL;
    }
    return (h ^ (uint64_t)(unsigned)n) * 1099511628211ULL;
}

void krc_demo_uid(const char *ns, const char *name, char out[37])
{
    uint64_t a = fnv(ns, name, 1);
    uint64_t b = fnv(name, ns, 2);

    snprintf(out, 37, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffffu, (unsigned)a & 0xfffu, (unsigned)(b >> 52) & 0xfffu,
             (unsigned long long)(b & 0xffffffffffffULL));
}

void krc_demo_container_id(const char *pod, const char *container, int instance, char out[78])
{
    int n = snprintf(out, 78, "containerd://");

    for (int k = 0; k < 4; k++) {
        n += snprintf(out + n, (size_t)(78 - n), "%016llx",
                      (unsigned long long)fnv(pod, container, instance * 4 + k));
    }
}

void krc_demo_pod_name(const struct krc_demo_case *c, int i, char *out, size_t outsz)
{
    if (c->replicas > 1) {
        snprintf(out, outsz, "%s-%d", c->pod, i);
    } else {
        snprintf(out, outsz, "%s", c->pod);
    }
}

static void add_time(cJSON *o, const char *key, int64_t t)
{
    char ts[40];

    krc_clock_format_rfc3339(t, ts, sizeof(ts));
    cJSON_AddStringToObject(o, key, ts);
}

static void add_raw_json(cJSON *o, const char *key, const char *json)
{
    cJSON *v = json != NULL ? cJSON_Parse(json) : NULL;

    if (v != NULL) {
        cJSON_AddItemToObject(o, key, v);
    }
}

/* Each member of the JSON object `json` set in o (replacing one of the same
 * name). */
static void merge_raw_json(cJSON *o, const char *json)
{
    cJSON *v = json != NULL ? cJSON_Parse(json) : NULL;
    cJSON *item;

    while (v != NULL && (item = v->child) != NULL) {
        cJSON *old = cJSON_GetObjectItemCaseSensitive(o, item->string);
        cJSON_DetachItemViaPointer(v, item);
        /* the item keeps its name (item->string) either way */
        if (old != NULL) {
            cJSON_ReplaceItemViaPointer(o, old, item);
        } else {
            cJSON_AddItemToArray(o, item);
        }
    }
    cJSON_Delete(v);
}

static void job_labels(cJSON *labels, const struct krc_demo_case *c);

/* metadata.ownerReferences of m: the one controller NS/NAME of kind (api),
 * its uid as krc_demo_uid gives it. */
static void add_controller_ref(cJSON *m, const char *api, const char *kind, const char *ns,
                               const char *name)
{
    cJSON *o = cJSON_CreateObject();
    char uid[37];

    krc_demo_uid(ns, name, uid);
    cJSON_AddStringToObject(o, "apiVersion", api);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "uid", uid);
    cJSON_AddBoolToObject(o, "controller", 1);
    cJSON_AddBoolToObject(o, "blockOwnerDeletion", 1);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "ownerReferences"), o);
}

/* metadata.ownerReferences: the controller that made the pod; a
 * ReplicaSet's pods carry its hash as the pod-template-hash label, a Job's
 * the Job's uid and name. */
static void add_owner(cJSON *m, cJSON *labels, const struct krc_demo_case *c)
{
    const char *dash = strrchr(c->owner_name, '-');

    add_controller_ref(m, c->owner_api, c->owner_kind, c->ns, c->owner_name);
    if (strcmp(c->owner_kind, "ReplicaSet") == 0 && dash != NULL) {
        cJSON_AddStringToObject(labels, "pod-template-hash", dash + 1);
    } else if (strcmp(c->owner_kind, "Job") == 0) {
        job_labels(labels, c);
    }
}

/* The labels the StatefulSet controller gives its pod NAME-ORDINAL: the
 * revision it was made from, its name and ordinal (1.28+). */
static void statefulset_pod_labels(cJSON *labels, const struct krc_demo_case *c, const char *name)
{
    const char *dash = strrchr(name, '-');
    char hash[300];

    if (krc_demo_revision_name(c, hash, sizeof(hash)) == 0) {
        cJSON_AddStringToObject(labels, "controller-revision-hash", hash);
    }
    cJSON_AddStringToObject(labels, "statefulset.kubernetes.io/pod-name", name);
    if (dash != NULL) {
        cJSON_AddStringToObject(labels, "apps.kubernetes.io/pod-index", dash + 1);
    }
}

static cJSON *pod_metadata(const struct krc_demo_case *c, const char *name, int64_t created)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *labels = cJSON_AddObjectToObject(m, "labels");
    char uid[37];

    krc_demo_uid(c->ns, name, uid);
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", c->ns);
    cJSON_AddStringToObject(m, "uid", uid);
    cJSON_AddStringToObject(m, "resourceVersion", "0"); /* the server sets it */
    add_time(m, "creationTimestamp", created);
    cJSON_AddStringToObject(labels, "app", c->key);
    cJSON_AddStringToObject(labels, "krc-demo", "true");
    if (c->owner_kind != NULL) {
        add_owner(m, labels, c);
        if (strcmp(c->owner_kind, "StatefulSet") == 0) {
            statefulset_pod_labels(labels, c, name);
        }
    }
    return m;
}

static cJSON *container_spec(const char *name, const char *image, const char *resources,
                             const char *liveness)
{
    cJSON *k = cJSON_CreateObject();

    cJSON_AddStringToObject(k, "name", name);
    cJSON_AddStringToObject(k, "image", image);
    cJSON_AddStringToObject(k, "imagePullPolicy", "IfNotPresent");
    if (resources != NULL) {
        add_raw_json(k, "resources", resources);
    } else {
        cJSON_AddObjectToObject(k, "resources");
    }
    add_raw_json(k, "livenessProbe", liveness);
    cJSON_AddStringToObject(k, "terminationMessagePath", "/dev/termination-log");
    cJSON_AddStringToObject(k, "terminationMessagePolicy", "File");
    return k;
}

/* The image of another container of a field demonstration's pod: the
 * demo's own name, beside the main container's image. */
static void other_image(const struct krc_demo_case *c, const char *name, char *out, size_t outsz)
{
    const char *slash = strrchr(c->image, '/');
    const char *colon = strrchr(c->image, ':');

    snprintf(out, outsz, "%.*s%s%s", slash != NULL ? (int)(slash - c->image + 1) : 0, c->image,
             name, colon != NULL && (slash == NULL || colon > slash) ? colon : "");
}

static cJSON *pod_spec(const struct krc_demo_case *c)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *cs = cJSON_AddArrayToObject(s, "containers");
    cJSON *mine = container_spec(c->container, c->image, c->resources, c->liveness);

    add_raw_json(mine, "args", c->args_json);
    merge_raw_json(mine, c->container_spec_json);
    cJSON_AddItemToArray(cs, mine);
    for (size_t k = 0; c->others != NULL && c->others[k] != NULL; k++) {
        char image[256];
        other_image(c, c->others[k], image, sizeof(image));
        cJSON_AddItemToArray(cs, container_spec(c->others[k], image, NULL, NULL));
    }
    cJSON_AddStringToObject(s, "nodeName", c->node);
    cJSON_AddStringToObject(s, "restartPolicy",
                            c->restart_policy != NULL ? c->restart_policy : "Always");
    cJSON_AddNumberToObject(s, "terminationGracePeriodSeconds", 30);
    cJSON_AddStringToObject(s, "schedulerName", "default-scheduler");
    merge_raw_json(s, c->pod_spec_json);
    return s;
}

static cJSON *state_waiting(const char *reason, const char *message)
{
    cJSON *st = cJSON_CreateObject();
    cJSON *w = cJSON_AddObjectToObject(st, "waiting");

    cJSON_AddStringToObject(w, "reason", reason);
    if (message != NULL) {
        cJSON_AddStringToObject(w, "message", message);
    }
    return st;
}

static cJSON *state_running(int64_t since)
{
    cJSON *st = cJSON_CreateObject();

    add_time(cJSON_AddObjectToObject(st, "running"), "startedAt", since);
    return st;
}

/* lastState.terminated of the crashed instance (the restarts-th). A
 * StartError instance never started: containerd reports startedAt as the
 * Unix epoch. */
static cJSON *last_terminated(const struct krc_demo_case *c, const char *pod, int restarts,
                              int64_t ran_from, int64_t ended)
{
    cJSON *st = cJSON_CreateObject();
    cJSON *t = cJSON_AddObjectToObject(st, "terminated");
    char cid[78];

    krc_demo_container_id(pod, c->container, restarts, cid);
    cJSON_AddStringToObject(t, "containerID", cid);
    cJSON_AddNumberToObject(t, "exitCode", c->exit_code);
    cJSON_AddStringToObject(t, "reason", c->t_reason);
    if (c->t_message != NULL) {
        cJSON_AddStringToObject(t, "message", c->t_message);
    }
    add_time(t, "startedAt", strcmp(c->t_reason, "StartError") == 0 ? 0 : ran_from);
    add_time(t, "finishedAt", ended);
    return st;
}

int krc_demo_backoff_s(int restarts)
{
    int s = 10;

    /* the kubelet's initial back-off, doubled per crash, capped (MaxContainerBackOff) */
    for (int k = 1; k < restarts && s < 300; k++) {
        s *= 2;
    }
    return s < 300 ? s : 300;
}

static cJSON *container_status(const struct krc_demo_case *c, const char *pod, const char *uid,
                               int restarts, int64_t started, int64_t ran_from, int64_t ended)
{
    cJSON *k = cJSON_CreateObject();
    char cid[78];
    char msg[512];
    int never_started = strcmp(c->t_reason, "StartError") == 0;

    cJSON_AddStringToObject(k, "name", c->container);
    cJSON_AddStringToObject(k, "image", c->image);
    cJSON_AddStringToObject(k, "imageID", "");
    if (restarts == 0) {
        krc_demo_container_id(pod, c->container, 0, cid);
        cJSON_AddStringToObject(k, "containerID", cid);
        cJSON_AddItemToObject(k, "state",
                              never_started ? state_waiting("ContainerCreating", NULL)
                                            : state_running(started));
        cJSON_AddObjectToObject(k, "lastState");
        cJSON_AddBoolToObject(k, "ready", !never_started);
        cJSON_AddNumberToObject(k, "restartCount", 0);
        cJSON_AddBoolToObject(k, "started", !never_started);
        return k;
    }
    krc_demo_container_id(pod, c->container, restarts, cid);
    if (c->running_after) {
        /* restarted by its rule at once (a field demonstration) */
        cJSON_AddStringToObject(k, "containerID", cid);
        cJSON_AddItemToObject(k, "state", state_running(ended + 3));
    } else {
        snprintf(msg, sizeof(msg), "back-off %ds restarting failed container=%s pod=%s_%s(%s)",
                 krc_demo_backoff_s(restarts), c->container, pod, c->ns, uid);
        cJSON_AddItemToObject(k, "state", state_waiting("CrashLoopBackOff", msg));
    }
    cJSON_AddItemToObject(k, "lastState", last_terminated(c, pod, restarts, ran_from, ended));
    cJSON_AddBoolToObject(k, "ready", c->running_after);
    cJSON_AddNumberToObject(k, "restartCount", restarts);
    cJSON_AddBoolToObject(k, "started", c->running_after);
    merge_raw_json(k, c->crashed_status_json);
    return k;
}

/* Another container of the pod: running since `started`, or (others_restart)
 * stopped by the kubelet 1 s after the case's container ended (exit 137, as
 * in tests/fixtures/k8s-1.35/restart-all.json) and running again. */
static cJSON *other_status(const struct krc_demo_case *c, const char *pod, const char *name,
                           int restarts, int64_t started, int64_t ran_from, int64_t ended)
{
    cJSON *k = cJSON_CreateObject();
    int n = c->others_restart ? restarts : 0;
    char image[256];
    char cid[78];

    other_image(c, name, image, sizeof(image));
    krc_demo_container_id(pod, name, n, cid);
    cJSON_AddStringToObject(k, "name", name);
    cJSON_AddStringToObject(k, "image", image);
    cJSON_AddStringToObject(k, "imageID", "");
    cJSON_AddStringToObject(k, "containerID", cid);
    cJSON_AddItemToObject(k, "state", state_running(n > 0 ? ended + 4 : started));
    if (n > 0) {
        cJSON *st = cJSON_CreateObject();
        cJSON *t = cJSON_AddObjectToObject(st, "terminated");
        krc_demo_container_id(pod, name, n - 1, cid);
        cJSON_AddStringToObject(t, "containerID", cid);
        cJSON_AddNumberToObject(t, "exitCode", 137);
        cJSON_AddStringToObject(t, "reason", "Error");
        add_time(t, "startedAt", ran_from);
        add_time(t, "finishedAt", ended + 1);
        cJSON_AddItemToObject(k, "lastState", st);
    } else {
        cJSON_AddObjectToObject(k, "lastState");
    }
    cJSON_AddBoolToObject(k, "ready", 1);
    cJSON_AddNumberToObject(k, "restartCount", n);
    cJSON_AddBoolToObject(k, "started", 1);
    return k;
}

/* status.conditions of a field demonstration after a crash: each of the
 * case's, its lastTransitionTime 3 s after the exit. */
static void add_conditions(cJSON *s, const struct krc_demo_case *c, int64_t ended)
{
    cJSON *list = c->conditions_json != NULL ? cJSON_Parse(c->conditions_json) : NULL;
    cJSON *k;

    if (list == NULL) {
        return;
    }
    cJSON_ArrayForEach(k, list)
    {
        cJSON_AddNullToObject(k, "lastProbeTime");
        add_time(k, "lastTransitionTime", ended + 3);
    }
    cJSON_AddItemToObject(s, "conditions", list);
}

static cJSON *pod_status(const struct krc_demo_case *c, const char *pod, const char *uid,
                         int restarts, int64_t started, int64_t ran_from, int64_t ended)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *mine = container_status(c, pod, uid, restarts, started, ran_from, ended);
    int running = strcmp(c->t_reason, "StartError") != 0;

    cJSON_AddStringToObject(s, "phase", running ? "Running" : "Pending");
    cJSON_AddStringToObject(s, "hostIP", "10.0.0.10");
    cJSON_AddStringToObject(s, "podIP", "10.244.1.17");
    add_time(s, "startTime", started);
    cJSON_AddStringToObject(
        s, "qosClass",
        c->resources != NULL ||
                (c->pod_spec_json != NULL && strstr(c->pod_spec_json, "\"resources\"") != NULL)
            ? "Burstable"
            : "BestEffort");
    if (restarts > 0) {
        add_conditions(s, c, ended);
    }
    cJSON_AddItemToArray(cJSON_AddArrayToObject(s, "containerStatuses"), mine);
    for (size_t k = 0; c->others != NULL && c->others[k] != NULL; k++) {
        cJSON_AddItemToArray(
            cJSON_GetObjectItem(s, "containerStatuses"),
            other_status(c, pod, c->others[k], restarts, started, ran_from, ended));
    }
    return s;
}

cJSON *krc_demo_pod_json(const struct krc_demo_case *c, int i, int restarts, int64_t started,
                         int64_t ran_from, int64_t ended)
{
    cJSON *p = cJSON_CreateObject();
    char name[256];
    char uid[37];

    if (p == NULL) {
        return NULL;
    }
    krc_demo_pod_name(c, i, name, sizeof(name));
    krc_demo_uid(c->ns, name, uid);
    cJSON_AddStringToObject(p, "kind", "Pod");
    cJSON_AddStringToObject(p, "apiVersion", "v1");
    cJSON_AddItemToObject(p, "metadata", pod_metadata(c, name, started));
    cJSON_AddItemToObject(p, "spec", pod_spec(c));
    cJSON_AddItemToObject(p, "status",
                          pod_status(c, name, uid, restarts, started, ran_from, ended));
    /* cJSON's adders fail silently on ENOMEM: check the result as a whole */
    if (cJSON_GetObjectItem(p, "status") == NULL ||
        cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "uid") == NULL ||
        (c->owner_kind != NULL && strcmp(c->owner_kind, "StatefulSet") == 0 &&
         cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "labels"),
                             "controller-revision-hash") == NULL)) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}

static cJSON *condition(const char *type, const char *status, const char *reason,
                        const char *message, int64_t heartbeat, int64_t transition)
{
    cJSON *k = cJSON_CreateObject();

    cJSON_AddStringToObject(k, "type", type);
    cJSON_AddStringToObject(k, "status", status);
    add_time(k, "lastHeartbeatTime", heartbeat);
    add_time(k, "lastTransitionTime", transition);
    cJSON_AddStringToObject(k, "reason", reason);
    cJSON_AddStringToObject(k, "message", message);
    return k;
}

cJSON *krc_demo_node_json(const struct krc_demo_node *n, int ready, int64_t created,
                          int64_t transition)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(o, "metadata");
    cJSON *st = cJSON_AddObjectToObject(o, "status");
    cJSON *cap = cJSON_AddObjectToObject(st, "capacity");
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    cJSON *info = cJSON_AddObjectToObject(st, "nodeInfo");
    char mem[32];
    char uid[37];
    static const char *const pressure[][3] = {
        {"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
    };
    const char *unk = "Kubelet stopped posting node status.";

    cJSON_AddStringToObject(o, "kind", "Node");
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    krc_demo_uid("", n->name, uid);
    cJSON_AddStringToObject(m, "name", n->name);
    cJSON_AddStringToObject(m, "uid", uid);
    cJSON_AddStringToObject(m, "resourceVersion", "0");
    add_time(m, "creationTimestamp", created);
    snprintf(mem, sizeof(mem), "%lldKi", (long long)n->memory_gib * 1024 * 1024);
    cJSON_AddStringToObject(cap, "cpu", n->gpus > 0 ? "256" : "4");
    cJSON_AddStringToObject(cap, "memory", mem);
    cJSON_AddStringToObject(cap, "pods", "110");
    if (n->gpus > 0) {
        char gpus[16];
        snprintf(gpus, sizeof(gpus), "%d", n->gpus);
        cJSON_AddStringToObject(cap, "nvidia.com/gpu", gpus);
    }
    cJSON_AddItemReferenceToObject(st, "allocatable", cap);
    for (size_t k = 0; k < 3; k++) {
        cJSON_AddItemToArray(conds, ready
                                        ? condition(pressure[k][0], "False", pressure[k][1],
                                                    pressure[k][2], transition, created)
                                        : condition(pressure[k][0], "Unknown", "NodeStatusUnknown",
                                                    unk, transition - 40, transition));
    }
    cJSON_AddItemToArray(conds, ready ? condition("Ready", "True", "KubeletReady",
                                                  "kubelet is posting ready status", transition,
                                                  transition)
                                      : condition("Ready", "Unknown", "NodeStatusUnknown", unk,
                                                  transition - 40, transition));
    cJSON_AddStringToObject(info, "kubeletVersion", "v1.31.4");
    cJSON_AddStringToObject(info, "containerRuntimeVersion", "containerd://1.7.24");
    cJSON_AddStringToObject(info, "osImage", "Ubuntu 22.04.5 LTS");
    cJSON_AddStringToObject(info, "architecture", "amd64");
    return o;
}

static cJSON *event_common(const char *ns, const char *type, const char *reason,
                           const char *message, const char *component, const char *name)
{
    cJSON *e = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(e, "metadata");

    cJSON_AddStringToObject(e, "kind", "Event");
    cJSON_AddStringToObject(e, "apiVersion", "v1");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", ns);
    cJSON_AddStringToObject(m, "resourceVersion", "0");
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON_AddStringToObject(e, "message", message);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "source"), "component", component);
    cJSON_AddStringToObject(e, "reportingComponent", component);
    cJSON_AddNullToObject(e, "eventTime");
    return e;
}

static void seq_name(int seq, char *out, size_t outsz)
{
    snprintf(out, outsz, "krc-demo.%08x", (unsigned)seq);
}

/* involvedObject: the container of replica `i`, and the kubelet's host. */
static void involve_pod(cJSON *o, const struct krc_demo_case *c, int i, const char *component)
{
    cJSON *io = cJSON_AddObjectToObject(o, "involvedObject");
    char name[256];
    char uid[37];
    char field[300];

    krc_demo_pod_name(c, i, name, sizeof(name));
    krc_demo_uid(c->ns, name, uid);
    cJSON_AddStringToObject(io, "kind", "Pod");
    cJSON_AddStringToObject(io, "namespace", c->ns);
    cJSON_AddStringToObject(io, "name", name);
    cJSON_AddStringToObject(io, "uid", uid);
    cJSON_AddStringToObject(io, "apiVersion", "v1");
    if (strcmp(component, "kubelet") == 0) {
        snprintf(field, sizeof(field), "spec.containers{%s}", c->container);
        cJSON_AddStringToObject(io, "fieldPath", field);
        cJSON_AddStringToObject(cJSON_GetObjectItem(o, "source"), "host", c->node);
    }
}

cJSON *krc_demo_event_json(const struct krc_demo_case *c, int i, const struct krc_demo_event *e,
                           int64_t ended, int seq)
{
    char name[64];
    cJSON *o;

    seq_name(seq, name, sizeof(name));
    o = event_common(c->ns, e->type, e->reason, e->message, e->component, name);
    involve_pod(o, c, i, e->component);
    add_time(o, "firstTimestamp", ended + e->first_offset_s);
    add_time(o, "lastTimestamp", ended + e->last_offset_s);
    cJSON_AddNumberToObject(o, "count", e->count);
    return o;
}

/* The kubelet's BackOff event in the wording of the CUDA case's events.json
 * ("Back-off restarting failed container C in pod NAME_NAMESPACE(UID)"). */
cJSON *krc_demo_backoff_event_json(const struct krc_demo_case *c, int i, int count, int64_t first,
                                   int64_t last)
{
    char pod[256];
    char uid[37];
    char msg[600];
    char name[300];
    cJSON *o;

    krc_demo_pod_name(c, i, pod, sizeof(pod));
    krc_demo_uid(c->ns, pod, uid);
    snprintf(msg, sizeof(msg), "Back-off restarting failed container %s in pod %s_%s(%s)",
             c->container, pod, c->ns, uid);
    /* one object per pod, as the event recorder keeps it: NAME.HEX */
    snprintf(name, sizeof(name), "%s.%016llx", pod, (unsigned long long)fnv(pod, "BackOff", 0));
    o = event_common(c->ns, "Warning", "BackOff", msg, "kubelet", name);
    involve_pod(o, c, i, "kubelet");
    add_time(o, "firstTimestamp", first);
    add_time(o, "lastTimestamp", last);
    cJSON_AddNumberToObject(o, "count", count);
    return o;
}

cJSON *krc_demo_node_event_json(const char *node, const char *type, const char *reason,
                                const char *message, const char *component, int64_t t, int seq)
{
    char name[64];
    cJSON *o;
    cJSON *io;

    seq_name(seq, name, sizeof(name));
    o = event_common("default", type, reason, message, component, name);
    io = cJSON_AddObjectToObject(o, "involvedObject");

    cJSON_AddStringToObject(io, "kind", "Node");
    cJSON_AddStringToObject(io, "name", node);
    cJSON_AddStringToObject(io, "uid", node);
    cJSON_AddStringToObject(io, "apiVersion", "v1");
    add_time(o, "firstTimestamp", t);
    add_time(o, "lastTimestamp", t);
    cJSON_AddNumberToObject(o, "count", 1);
    return o;
}

/* --- the Deployments of the ReplicaSet cases (change tracking) ----------------- */

#define DAY_S 86400
#define CREATED_DAYS 30 /* a workload without a rollout: made this long ago */

int64_t krc_demo_pod_created(const struct krc_demo_case *c, int64_t t0)
{
    return c->rollout != NULL ? t0 - c->rollout->before_s + 5 : t0 - 3600;
}

int krc_demo_deployment_name(const struct krc_demo_case *c, char *out, size_t outsz)
{
    const char *dash = c->owner_name != NULL ? strrchr(c->owner_name, '-') : NULL;

    if (c->owner_kind == NULL || strcmp(c->owner_kind, "ReplicaSet") != 0 || dash == NULL ||
        dash == c->owner_name || (size_t)(dash - c->owner_name) >= outsz) {
        return -1;
    }
    snprintf(out, outsz, "%.*s", (int)(dash - c->owner_name), c->owner_name);
    return 0;
}

/* A managedFields entry: manager, operation Update, time, fieldsV1 (JSON). */
static void managed_entry(cJSON *list, const char *manager, const char *api, int64_t t,
                          const char *subresource, const char *fields)
{
    cJSON *e = cJSON_CreateObject();

    cJSON_AddStringToObject(e, "manager", manager);
    cJSON_AddStringToObject(e, "operation", "Update");
    cJSON_AddStringToObject(e, "apiVersion", api);
    add_time(e, "time", t);
    cJSON_AddStringToObject(e, "fieldsType", "FieldsV1");
    add_raw_json(e, "fieldsV1", fields);
    if (subresource != NULL) {
        cJSON_AddStringToObject(e, "subresource", subresource);
    }
    cJSON_AddItemToArray(list, e);
}

/* The pod template: the pod's labels (hash: with pod-template-hash) and its
 * spec without what the scheduler adds; prev_args: the rollout's previous
 * container args. */
static cJSON *pod_template(const struct krc_demo_case *c, const char *hash, const char *prev_args)
{
    cJSON *t = cJSON_CreateObject();
    cJSON *labels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(t, "metadata"), "labels");
    cJSON *spec = pod_spec(c);

    cJSON_AddStringToObject(labels, "app", c->key);
    cJSON_AddStringToObject(labels, "krc-demo", "true");
    if (hash != NULL) {
        cJSON_AddStringToObject(labels, "pod-template-hash", hash);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
    if (prev_args != NULL) {
        cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(spec, "containers"), 0);
        cJSON_DeleteItemFromObjectCaseSensitive(k, "args");
        add_raw_json(k, "args", prev_args);
    }
    cJSON_AddItemToObject(t, "spec", spec);
    return t;
}

static cJSON *selector(const struct krc_demo_case *c, const char *hash)
{
    cJSON *sel = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(sel, "matchLabels");

    cJSON_AddStringToObject(m, "app", c->key);
    cJSON_AddStringToObject(m, "krc-demo", "true");
    if (hash != NULL) {
        cJSON_AddStringToObject(m, "pod-template-hash", hash);
    }
    return sel;
}

static const char TEMPLATE_FIELDS[] =
    "{\"f:spec\":{\"f:replicas\":{},\"f:selector\":{},\"f:strategy\":{\"f:type\":{}},"
    "\"f:template\":{\"f:metadata\":{\"f:labels\":{}},\"f:spec\":{\"f:containers\":{}}}}}";

cJSON *krc_demo_deployment_json(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *d;
    cJSON *m;
    cJSON *spec;
    cJSON *st;
    cJSON *mf;
    char name[254];
    char uid[37];
    char rev[16];
    int64_t created = t0 - (int64_t)CREATED_DAYS * DAY_S;
    int64_t changed = c->rollout != NULL ? t0 - c->rollout->before_s : created;
    int revision = c->rollout != NULL ? 2 : 1;

    if (krc_demo_deployment_name(c, name, sizeof(name)) < 0 || (d = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    krc_demo_uid(c->ns, name, uid);
    snprintf(rev, sizeof(rev), "%d", revision);
    cJSON_AddStringToObject(d, "kind", "Deployment");
    cJSON_AddStringToObject(d, "apiVersion", "apps/v1");
    m = cJSON_AddObjectToObject(d, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", c->ns);
    cJSON_AddStringToObject(m, "uid", uid);
    cJSON_AddStringToObject(m, "resourceVersion", "0"); /* the server sets it */
    cJSON_AddNumberToObject(m, "generation", revision);
    add_time(m, "creationTimestamp", created);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "labels"), "app", c->key);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "annotations"),
                            "deployment.kubernetes.io/revision", rev);
    mf = cJSON_AddArrayToObject(m, "managedFields");
    managed_entry(mf, c->rollout != NULL ? c->rollout->manager : "kubectl-client-side-apply",
                  "apps/v1", changed, NULL, TEMPLATE_FIELDS);
    managed_entry(mf, "kube-controller-manager", "apps/v1", changed, NULL,
                  "{\"f:metadata\":{\"f:annotations\":{\"f:deployment.kubernetes.io/"
                  "revision\":{}}}}");
    managed_entry(mf, "kube-controller-manager", "apps/v1", changed, "status",
                  "{\"f:status\":{\"f:observedGeneration\":{},\"f:replicas\":{}}}");
    spec = cJSON_AddObjectToObject(d, "spec");
    cJSON_AddNumberToObject(spec, "replicas", c->replicas);
    cJSON_AddItemToObject(spec, "selector", selector(c, NULL));
    cJSON_AddItemToObject(spec, "template", pod_template(c, NULL, NULL));
    /* Recreate: the previous revision's pods were stopped before the new one's began */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "strategy"), "type",
                            c->rollout != NULL ? "Recreate" : "RollingUpdate");
    cJSON_AddNumberToObject(spec, "revisionHistoryLimit", 10);
    cJSON_AddNumberToObject(spec, "progressDeadlineSeconds", 600);
    st = cJSON_AddObjectToObject(d, "status");
    cJSON_AddNumberToObject(st, "observedGeneration", revision);
    cJSON_AddNumberToObject(st, "replicas", c->replicas);
    cJSON_AddNumberToObject(st, "updatedReplicas", c->replicas);
    /* cJSON's adders fail silently on ENOMEM: check the result as a whole */
    if (cJSON_GetObjectItem(st, "updatedReplicas") == NULL ||
        cJSON_GetObjectItem(spec, "template") == NULL || cJSON_GetArraySize(mf) != 3) {
        cJSON_Delete(d);
        return NULL;
    }
    return d;
}

cJSON *krc_demo_replicaset_json(const struct krc_demo_case *c, int previous, int64_t t0)
{
    cJSON *r;
    cJSON *m;
    cJSON *spec;
    cJSON *st;
    char deployment[254];
    char name[300];
    char uid[37];
    const char *hash;
    int64_t created = t0 - (int64_t)CREATED_DAYS * DAY_S;
    int revision = 1;
    int replicas = c->replicas;

    if (krc_demo_deployment_name(c, deployment, sizeof(deployment)) < 0 ||
        (previous && c->rollout == NULL)) {
        return NULL;
    }
    hash = c->owner_name + strlen(deployment) + 1;
    if (previous) {
        hash = c->rollout->prev_hash;
        replicas = 0; /* scaled down by the rollout */
    } else if (c->rollout != NULL) {
        created = t0 - c->rollout->before_s;
        revision = 2;
    }
    if ((r = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    snprintf(name, sizeof(name), "%s-%s", deployment, hash);
    krc_demo_uid(c->ns, name, uid);
    cJSON_AddStringToObject(r, "kind", "ReplicaSet");
    cJSON_AddStringToObject(r, "apiVersion", "apps/v1");
    m = cJSON_AddObjectToObject(r, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", c->ns);
    cJSON_AddStringToObject(m, "uid", uid);
    cJSON_AddStringToObject(m, "resourceVersion", "0"); /* the server sets it */
    cJSON_AddNumberToObject(m, "generation", previous ? 2 : 1);
    add_time(m, "creationTimestamp", created);
    {
        cJSON *labels = cJSON_AddObjectToObject(m, "labels");
        cJSON *ann = cJSON_AddObjectToObject(m, "annotations");
        char num[16];
        cJSON_AddStringToObject(labels, "app", c->key);
        cJSON_AddStringToObject(labels, "krc-demo", "true");
        cJSON_AddStringToObject(labels, "pod-template-hash", hash);
        snprintf(num, sizeof(num), "%d", c->replicas);
        cJSON_AddStringToObject(ann, "deployment.kubernetes.io/desired-replicas", num);
        snprintf(num, sizeof(num), "%d", c->replicas + (c->rollout != NULL ? 0 : 1));
        cJSON_AddStringToObject(ann, "deployment.kubernetes.io/max-replicas", num);
        snprintf(num, sizeof(num), "%d", revision);
        cJSON_AddStringToObject(ann, "deployment.kubernetes.io/revision", num);
    }
    add_controller_ref(m, "apps/v1", "Deployment", c->ns, deployment);
    managed_entry(cJSON_AddArrayToObject(m, "managedFields"), "kube-controller-manager", "apps/v1",
                  created, NULL,
                  "{\"f:metadata\":{\"f:annotations\":{},\"f:labels\":{},\"f:ownerReferences\":{}},"
                  "\"f:spec\":{\"f:replicas\":{},\"f:selector\":{},\"f:template\":{}}}");
    spec = cJSON_AddObjectToObject(r, "spec");
    cJSON_AddNumberToObject(spec, "replicas", replicas);
    cJSON_AddItemToObject(spec, "selector", selector(c, hash));
    cJSON_AddItemToObject(spec, "template",
                          pod_template(c, hash, previous ? c->rollout->prev_args_json : NULL));
    st = cJSON_AddObjectToObject(r, "status");
    cJSON_AddNumberToObject(st, "replicas", replicas);
    cJSON_AddNumberToObject(st, "fullyLabeledReplicas", replicas);
    if (!previous) {
        /* its pods run until the scenario's crash */
        cJSON_AddNumberToObject(st, "readyReplicas", replicas);
        cJSON_AddNumberToObject(st, "availableReplicas", replicas);
    }
    cJSON_AddNumberToObject(st, "observedGeneration", previous ? 2 : 1);
    if (cJSON_GetObjectItem(st, "observedGeneration") == NULL ||
        cJSON_GetObjectItem(spec, "template") == NULL ||
        cJSON_GetArrayItem(cJSON_GetObjectItem(m, "ownerReferences"), 0) == NULL) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* --- the StatefulSets and Jobs of the other cases (change tracking) ------------ */

static int owned_by(const struct krc_demo_case *c, const char *kind)
{
    return c->owner_kind != NULL && strcmp(c->owner_kind, kind) == 0;
}

/* The labels the Job's API defaults put on its template (so on its pods)
 * and select by, the Job's uid and name, as on the CUDA case's pod. */
static void job_labels(cJSON *labels, const struct krc_demo_case *c)
{
    char uid[37];

    krc_demo_uid(c->ns, c->owner_name, uid);
    cJSON_AddStringToObject(labels, "batch.kubernetes.io/controller-uid", uid);
    cJSON_AddStringToObject(labels, "batch.kubernetes.io/job-name", c->owner_name);
    cJSON_AddStringToObject(labels, "controller-uid", uid);
    cJSON_AddStringToObject(labels, "job-name", c->owner_name);
}

/* The pod template of a StatefulSet or Job case as its owner holds it: the
 * pod's labels but those its controller adds to each pod, and its spec
 * without the node. NULL on ENOMEM. */
static cJSON *owner_template(const struct krc_demo_case *c)
{
    cJSON *t = pod_template(c, NULL, NULL);
    cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"), "labels");

    if (labels != NULL && owned_by(c, "Job")) {
        job_labels(labels, c);
    }
    if (labels == NULL || cJSON_GetObjectItem(t, "spec") == NULL ||
        (owned_by(c, "Job") && cJSON_GetObjectItem(labels, "job-name") == NULL)) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* A ControllerRevision's data as the StatefulSet controller stores it: a
 * strategic merge patch that replaces the template. */
static cJSON *revision_data(const struct krc_demo_case *c)
{
    cJSON *data = cJSON_CreateObject();
    cJSON *t = owner_template(c);
    cJSON *spec = cJSON_AddObjectToObject(data, "spec");

    if (t == NULL || spec == NULL || !cJSON_AddItemToObject(spec, "template", t)) {
        cJSON_Delete(t);
        cJSON_Delete(data);
        return NULL;
    }
    if (cJSON_AddStringToObject(t, "$patch", "replace") == NULL) {
        cJSON_Delete(data);
        return NULL;
    }
    return data;
}

/* k8s.io/apimachinery's rand.SafeEncodeString alphabet (no vowels, no 0, 1, 3) */
static const char SAFE_ALPHABET[] = "bcdfghjklmnpqrstvwxz2456789";

int krc_demo_revision_name(const struct krc_demo_case *c, char *out, size_t outsz)
{
    cJSON *data;
    char *raw;
    uint32_t h = 2166136261u;
    char dec[16];
    size_t n;
    size_t len;

    if (!owned_by(c, "StatefulSet") || (data = revision_data(c)) == NULL) {
        return -1;
    }
    raw = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);
    if (raw == NULL) {
        return -1;
    }
    /* FNV-1 (32 bits) of the data, as history.HashControllerRevision */
    for (const char *p = raw; *p != '\0'; p++) {
        h = (h * 16777619u) ^ (unsigned char)*p;
    }
    cJSON_free(raw);
    snprintf(dec, sizeof(dec), "%u", (unsigned)h);
    n = strlen(c->owner_name);
    len = strlen(dec);
    if (n + 1 + len >= outsz) {
        return -1;
    }
    memcpy(out, c->owner_name, n);
    out[n] = '-';
    for (size_t k = 0; k < len; k++) {
        out[n + 1 + k] = SAFE_ALPHABET[(unsigned char)dec[k] % (sizeof(SAFE_ALPHABET) - 1)];
    }
    out[n + 1 + len] = '\0';
    return 0;
}

int64_t krc_demo_owner_created(const struct krc_demo_case *c, int64_t t0)
{
    /* a Job's pod follows its Job within seconds (the CUDA case posted its
     * pod's time, not its Job's); the others' one revision is 30 days old */
    return owned_by(c, "Job") ? krc_demo_pod_created(c, t0) - 2
                              : t0 - (int64_t)CREATED_DAYS * DAY_S;
}

/* kind, apiVersion and the metadata of an object of the case's namespace. */
static cJSON *object_head(cJSON *o, const char *kind, const char *api,
                          const struct krc_demo_case *c, const char *name, int64_t created)
{
    cJSON *m;
    char uid[37];

    krc_demo_uid(c->ns, name, uid);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "apiVersion", api);
    m = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", c->ns);
    cJSON_AddStringToObject(m, "uid", uid);
    cJSON_AddStringToObject(m, "resourceVersion", "0"); /* the server sets it */
    add_time(m, "creationTimestamp", created);
    return m;
}

cJSON *krc_demo_statefulset_json(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *s;
    cJSON *m;
    cJSON *spec;
    cJSON *st;
    cJSON *mf;
    cJSON *u;
    char rev[300];
    int64_t created = krc_demo_owner_created(c, t0);

    if (krc_demo_revision_name(c, rev, sizeof(rev)) < 0 || (s = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    m = object_head(s, "StatefulSet", "apps/v1", c, c->owner_name, created);
    cJSON_AddNumberToObject(m, "generation", 1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "labels"), "app", c->key);
    mf = cJSON_AddArrayToObject(m, "managedFields");
    managed_entry(mf, "kubectl-client-side-apply", "apps/v1", created, NULL,
                  "{\"f:spec\":{\"f:replicas\":{},\"f:selector\":{},\"f:serviceName\":{},"
                  "\"f:template\":{\"f:metadata\":{\"f:labels\":{}},\"f:spec\":{\"f:containers\":"
                  "{}}}}}");
    managed_entry(mf, "kube-controller-manager", "apps/v1", created, "status",
                  "{\"f:status\":{\"f:availableReplicas\":{},\"f:collisionCount\":{},"
                  "\"f:currentReplicas\":{},\"f:currentRevision\":{},\"f:observedGeneration\":{},"
                  "\"f:readyReplicas\":{},\"f:replicas\":{},\"f:updateRevision\":{},"
                  "\"f:updatedReplicas\":{}}}");
    spec = cJSON_AddObjectToObject(s, "spec");
    cJSON_AddNumberToObject(spec, "replicas", c->replicas);
    cJSON_AddItemToObject(spec, "selector", selector(c, NULL));
    cJSON_AddStringToObject(spec, "serviceName", c->owner_name);
    cJSON_AddItemToObject(spec, "template", owner_template(c));
    cJSON_AddStringToObject(spec, "podManagementPolicy", "OrderedReady");
    u = cJSON_AddObjectToObject(spec, "updateStrategy");
    cJSON_AddStringToObject(u, "type", "RollingUpdate");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "rollingUpdate"), "partition", 0);
    cJSON_AddNumberToObject(spec, "revisionHistoryLimit", 10);
    st = cJSON_AddObjectToObject(s, "status");
    cJSON_AddNumberToObject(st, "observedGeneration", 1);
    cJSON_AddNumberToObject(st, "replicas", c->replicas);
    cJSON_AddNumberToObject(st, "readyReplicas", c->replicas);
    cJSON_AddNumberToObject(st, "currentReplicas", c->replicas);
    cJSON_AddNumberToObject(st, "updatedReplicas", c->replicas);
    cJSON_AddNumberToObject(st, "availableReplicas", c->replicas);
    cJSON_AddStringToObject(st, "currentRevision", rev);
    cJSON_AddStringToObject(st, "updateRevision", rev);
    cJSON_AddNumberToObject(st, "collisionCount", 0);
    /* cJSON's adders fail silently on ENOMEM: check the result as a whole */
    if (cJSON_GetObjectItem(st, "collisionCount") == NULL ||
        cJSON_GetObjectItem(spec, "template") == NULL || cJSON_GetArraySize(mf) != 2) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

cJSON *krc_demo_controllerrevision_json(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *r;
    cJSON *m;
    cJSON *data;
    cJSON *labels;
    char name[300];
    int64_t created = krc_demo_owner_created(c, t0);

    if (krc_demo_revision_name(c, name, sizeof(name)) < 0 || (r = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    m = object_head(r, "ControllerRevision", "apps/v1", c, name, created);
    /* the template's labels and the hash, as the controller labels it */
    labels = cJSON_AddObjectToObject(m, "labels");
    cJSON_AddStringToObject(labels, "app", c->key);
    cJSON_AddStringToObject(labels, "krc-demo", "true");
    cJSON_AddStringToObject(labels, "controller.kubernetes.io/hash",
                            name + strlen(c->owner_name) + 1);
    add_controller_ref(m, "apps/v1", "StatefulSet", c->ns, c->owner_name);
    managed_entry(cJSON_AddArrayToObject(m, "managedFields"), "kube-controller-manager", "apps/v1",
                  created, NULL,
                  "{\"f:data\":{},\"f:metadata\":{\"f:labels\":{},\"f:ownerReferences\":{}},"
                  "\"f:revision\":{}}");
    data = revision_data(c);
    if (data != NULL && !cJSON_AddItemToObject(r, "data", data)) {
        cJSON_Delete(data);
    }
    cJSON_AddNumberToObject(r, "revision", 1);
    if (cJSON_GetObjectItem(r, "revision") == NULL || cJSON_GetObjectItem(r, "data") == NULL ||
        cJSON_GetArrayItem(cJSON_GetObjectItem(m, "ownerReferences"), 0) == NULL) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

cJSON *krc_demo_job_json(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *j;
    cJSON *m;
    cJSON *spec;
    cJSON *st;
    cJSON *mf;
    cJSON *sel;
    char uid[37];
    int64_t created = krc_demo_owner_created(c, t0);

    if (!owned_by(c, "Job") || (j = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    m = object_head(j, "Job", "batch/v1", c, c->owner_name, created);
    cJSON_AddNumberToObject(m, "generation", 1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "labels"), "app", c->key);
    mf = cJSON_AddArrayToObject(m, "managedFields");
    managed_entry(mf, "kubectl-client-side-apply", "batch/v1", created, NULL,
                  "{\"f:spec\":{\"f:backoffLimit\":{},\"f:completions\":{},\"f:parallelism\":{},"
                  "\"f:template\":{\"f:metadata\":{\"f:labels\":{}},\"f:spec\":{\"f:containers\":"
                  "{},\"f:restartPolicy\":{}}}}}");
    managed_entry(mf, "kube-controller-manager", "batch/v1", created + 1, "status",
                  "{\"f:status\":{\"f:active\":{},\"f:ready\":{},\"f:startTime\":{},"
                  "\"f:uncountedTerminatedPods\":{}}}");
    spec = cJSON_AddObjectToObject(j, "spec");
    cJSON_AddNumberToObject(spec, "parallelism", 1);
    cJSON_AddNumberToObject(spec, "completions", 1);
    cJSON_AddNumberToObject(spec, "backoffLimit", 6);
    cJSON_AddStringToObject(spec, "completionMode", "NonIndexed");
    cJSON_AddBoolToObject(spec, "suspend", 0);
    cJSON_AddStringToObject(spec, "podReplacementPolicy", "TerminatingOrFailed");
    /* the generated selector: the Job's uid */
    krc_demo_uid(c->ns, c->owner_name, uid);
    sel = cJSON_AddObjectToObject(spec, "selector");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(sel, "matchLabels"),
                            "batch.kubernetes.io/controller-uid", uid);
    cJSON_AddItemToObject(spec, "template", owner_template(c));
    st = cJSON_AddObjectToObject(j, "status");
    add_time(st, "startTime", created + 1);
    cJSON_AddNumberToObject(st, "active", 1);
    cJSON_AddNumberToObject(st, "ready", 1);
    cJSON_AddNumberToObject(st, "terminating", 0);
    cJSON_AddObjectToObject(st, "uncountedTerminatedPods");
    if (cJSON_GetObjectItem(st, "uncountedTerminatedPods") == NULL ||
        cJSON_GetObjectItem(spec, "template") == NULL || cJSON_GetArraySize(mf) != 2) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}
