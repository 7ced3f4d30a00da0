#!/usr/bin/env bash
# Conformance of the kappa fake API server, judged by kubectl 1.32 and then by
# Debian's python3-kubernetes (python_client_check.py).
#
#   TB=/tmp/skyslurm-testbed scripts/testbed/kube/conformance.sh
#
# Needs a running kappa (scripts/testbed/kube/kappa up) and $TB/kubeconfig.
# Prints "ok NAME" / "FAIL NAME" per check and "N passed, M failed"; exits 1
# on any failure. Each run uses a fresh kubectl --cache-dir.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB=${TB:-${SKYSLURM_TESTBED_DIR:-/tmp/skyslurm-testbed}}
KC=${KAPPA_KUBECONFIG:-$TB/kubeconfig}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
[ -r "$KC" ] || {
  echo "conformance: no kubeconfig at $KC (run kappa up)" >&2
  exit 1
}
WORK=$(mktemp -d /tmp/kappa-conformance.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CACHE=$WORK/cache
JOB=conf-$(date +%s)-$$
MARK="conformance-marker-$RANDOM"
passed=0
failed=0

k() { "$KUBECTL" --kubeconfig "$KC" --cache-dir "$CACHE" --request-timeout=30s "$@"; }

ok() {
  echo "ok $1"
  passed=$((passed + 1))
}
bad() {
  echo "FAIL $1"
  [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /' | head -n 15
  failed=$((failed + 1))
}
# check NAME PATTERN CMD...: CMD succeeds and its output matches PATTERN (ERE).
check() {
  local name=$1 pat=$2 out
  shift 2
  if out=$("$@" 2>&1) && grep -Eq -- "$pat" <<<"$out"; then ok "$name"; else bad "$name" "$out"; fi
}
# refused NAME PATTERN CMD...: CMD fails and its output matches PATTERN.
refused() {
  local name=$1 pat=$2 out
  shift 2
  if ! out=$("$@" 2>&1) && grep -Eq -- "$pat" <<<"$out"; then ok "$name"; else bad "$name" "$out"; fi
}

job_manifest() { # NAME [EXTRA-POD-SPEC-LINE]
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {suite: kappa-conformance}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      ${2:-}
      containers:
      - name: main
        image: ubuntu:22.04
        command: ["sh", "-c", "echo $MARK on \$(hostname) index=\${JOB_COMPLETION_INDEX:-none}; sleep 1"]
        resources:
          limits: {nvidia.com/gpu: 1, cpu: "1", memory: 1Gi}
EOF
}

job_manifest "$JOB" >"$WORK/job.yaml"
job_manifest "$JOB-strict" "foo: bar" >"$WORK/unknown.yaml"
job_manifest "Bad_Name" >"$WORK/badname.yaml"

check get-nodes 'kappa-n1.*Ready' k get nodes
check gpu-allocatable '^kappa-n1=8 kappa-n2=8 kappa-n3=4 $' \
  k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.allocatable.nvidia\.com/gpu} {end}'
check gpu-product-label '^node/kappa-n3$' k get nodes -l nvidia.com/gpu.product=NVIDIA-L4 -o name
check create-job "job.batch/$JOB created" k create -f "$WORK/job.yaml"
refused strict-unknown-field 'strict decoding error: unknown field "spec.template.spec.foo"' \
  k create -f "$WORK/unknown.yaml"
refused duplicate-already-exists "AlreadyExists.*jobs.batch \"$JOB\" already exists" k create -f "$WORK/job.yaml"
refused invalid-name '(Invalid|is invalid).*metadata.name' k create -f "$WORK/badname.yaml"
check get-jobs "^$JOB " k get jobs --no-headers
check job-selector 'batch.kubernetes.io/controller-uid' k get job "$JOB" -o jsonpath='{.spec.selector.matchLabels}'
check pods-by-label "pod/$JOB-" k get pods -l "job-name=$JOB" -o name
check wait-complete 'condition met' k wait --for=condition=complete "job/$JOB" --timeout=60s
check logs-job "^$MARK on $JOB-[a-z0-9]{5} index=none" k logs "job/$JOB"
check job-status-succeeded '^1$' k get job "$JOB" -o jsonpath='{.status.succeeded}'
check label-patch 'labeled' k label job "$JOB" kappa-check=yes
check get-by-field-selector "$JOB" k get jobs --field-selector "metadata.name=$JOB" -o name
check delete-job "job.batch \"$JOB\" deleted" k delete job "$JOB"
pods_gone() {
  local i out
  for ((i = 0; i < 50; i++)); do
    out=$(k get pods -l "job-name=$JOB" -o name 2>&1) || return 1
    [ -z "$out" ] && echo gone && return 0
    sleep 0.2
  done
  echo "still there: $out"
  return 1
}
check delete-removes-pods '^gone$' pods_gone
refused get-after-delete-notfound "NotFound.*jobs.batch \"$JOB\" not found" k get job "$JOB"
# The garbage collector: a ConfigMap and a Service owned by a Job go with it
# (Background, kubectl's default); one that names no owner stays.
owned_go_with_job() {
  local owner=$JOB-owner uid i left before free
  job_manifest "$owner" >"$WORK/owner.yaml"
  k create -f "$WORK/owner.yaml" >/dev/null || return 1
  uid=$(k get job "$owner" -o jsonpath='{.metadata.uid}') || return 1
  cat >"$WORK/owned.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $owner-cm
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: $owner, uid: "$uid"}]
data: {a: b}
---
apiVersion: v1
kind: Service
metadata:
  name: $owner-svc
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: $owner, uid: "$uid"}]
spec: {clusterIP: None, selector: {job-name: $owner}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: $owner-free}
data: {a: b}
EOF
  k create -f "$WORK/owned.yaml" >/dev/null || return 1
  sleep 1
  before=$(k get configmap "$owner-cm" -o name) || return 1
  k delete job "$owner" >/dev/null || return 1
  for ((i = 0; i < 50; i++)); do
    left=$(k get configmap,service -o name 2>&1 | grep -cE -- "$owner-(cm|svc)$")
    [ "$left" = 0 ] && break
    sleep 0.2
  done
  free=$(k get configmap "$owner-free" -o name 2>&1)
  k delete configmap "$owner-free" >/dev/null 2>&1
  echo "before=$before owned-left=$left free=$free"
}
check gc-owned-by-deleted-job "^before=configmap/$JOB-owner-cm owned-left=0 free=configmap/$JOB-owner-free$" \
  owned_go_with_job
refused wrong-token 'Unauthorized' k --token=not-the-token get nodes
refused no-such-resource "doesn't have a resource type" k get widgets

# ------------------------------------------------ kubelet, scheduler, faults
IDX=idx-$$
cat >"$WORK/indexed.yaml" <<EOF
apiVersion: v1
kind: Service
metadata: {name: $IDX-svc}
spec:
  clusterIP: None
  selector: {job-name: $IDX}
---
apiVersion: batch/v1
kind: Job
metadata: {name: $IDX}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    spec:
      subdomain: $IDX-svc
      restartPolicy: Never
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.01-py3
        command: ["bash", "-c"]
        args:
        - |
          # Its peer may start later (a busy machine): as a real job would,
          # wait until both names resolve, and read them then. A pod that has
          # ended leaves the headless Service (as in Kubernetes), so each
          # stays a moment after for its peer to read its name.
          for i in \$(seq 60); do
            peer0=\$(getent hosts $IDX-0.$IDX-svc | awk '{print \$1}')
            peer1=\$(getent hosts $IDX-1.$IDX-svc | awk '{print \$1}')
            [ -n "\$peer0" ] && [ -n "\$peer1" ] && break
            sleep 0.5
          done
          echo "host=\$(hostname) index=\$JOB_COMPLETION_INDEX user=\$(id -un)"
          echo "peer0=\$peer0"
          echo "peer1=\$peer1"
          ls $TB/home >/dev/null 2>&1 && echo home=visible || echo home=hidden
          command -v srun >/dev/null && echo srun=visible || echo srun=hidden
          echo "slurm_conf=\${SLURM_CONF:-unset}"
          sleep 2
        resources:
          limits: {nvidia.com/gpu: 1}
EOF
indexed_logs() {
  local i p ip
  k create -f "$WORK/indexed.yaml" >/dev/null &&
    k wait --for=condition=complete "job/$IDX" --timeout=60s >/dev/null &&
    for i in 0 1; do
      p=$(k get pods -l "batch.kubernetes.io/job-completion-index=$i,job-name=$IDX" -o name) &&
        ip=$(k get "$p" -o jsonpath='{.status.podIP}') && echo "pod$i=$ip" && k logs "$p"
    done
}
idx_out=$(indexed_logs 2>&1)
ip0=$(sed -n 's/^pod0=//p' <<<"$idx_out")
ip1=$(sed -n 's/^pod1=//p' <<<"$idx_out")
count() { grep -cx -- "$1" <<<"$idx_out"; }
if [[ $ip0 == 127.* && $ip1 == 127.* && $ip0 != "$ip1" ]] &&
  [ "$(grep -cE "^host=$IDX-[01] index=[01] user=" <<<"$idx_out")" = 2 ] &&
  [ "$(count "peer0=$ip0")" = 2 ] && [ "$(count "peer1=$ip1")" = 2 ] && [ "$(count home=hidden)" = 2 ] &&
  [ "$(count srun=hidden)" = 2 ] && [ "$(count slurm_conf=unset)" = 2 ]; then
  ok indexed-job-headless-dns
else
  bad indexed-job-headless-dns "$idx_out"
fi
k delete job "$IDX" >/dev/null 2>&1
k delete service "$IDX-svc" >/dev/null 2>&1

pod_manifest() { # NAME IMAGE GPUS [GPU-PRODUCT]
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {suite: kappa-conformance}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  nodeSelector: {${4:+nvidia.com/gpu.product: $4}}
  containers:
  - {name: main, image: "$2", command: ["sleep", "30"], resources: {limits: {nvidia.com/gpu: $3}}}
EOF
}
P=kc$$
{
  pod_manifest "$P-badimage" no-such-registry.example/nope:1 1
  echo ---
  pod_manifest "$P-l4" ubuntu:22.04 1 NVIDIA-L4
  echo ---
  pod_manifest "$P-gpu9" ubuntu:22.04 9
} >"$WORK/pods.yaml"
k create -f "$WORK/pods.yaml" >/dev/null
waitfor() { # POD JSONPATH PATTERN: polls up to 10 s, prints the last value
  local i out
  for ((i = 0; i < 50; i++)); do
    out=$(k get pod "$1" -o jsonpath="$2" 2>&1)
    grep -Eq -- "$3" <<<"$out" && break
    sleep 0.2
  done
  echo "$out"
}
check unknown-image-backoff '^Pending ImagePullBackOff$' \
  waitfor "$P-badimage" '{.status.phase} {.status.containerStatuses[0].state.waiting.reason}' 'ImagePullBackOff'
check l4-lands-on-kappa-n3 '^kappa-n3 Running$' waitfor "$P-l4" '{.spec.nodeName} {.status.phase}' 'Running'
check gpu9-unschedulable '^Unschedulable 0/3 nodes are available: 3 Insufficient nvidia.com/gpu\.' \
  waitfor "$P-gpu9" '{.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}' 'Unschedulable'
TOKEN=$(sed -n 's/^ *token: //p' "$KC" | head -n 1)
SERVER=$(sed -n 's/^ *server: //p' "$KC" | head -n 1)
fake() { curl -sk --max-time 10 -H "Authorization: Bearer $TOKEN" -X POST -d "$2" "$SERVER/_fake/$1"; }
fake evict "{\"pod\":\"default/$P-l4\",\"reason\":\"EvictionByEvictionAPI\"}" >/dev/null
check evict-disruption-target '^Failed EvictionByEvictionAPI$' \
  waitfor "$P-l4" '{.status.phase} {.status.conditions[?(@.type=="DisruptionTarget")].reason}' '^Failed'
RV=$(k get --raw '/api/v1/namespaces/default/pods?limit=1' | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
fake inject '{"inject":"gone"}' >/dev/null
check watch-410-gone '"type":"ERROR".*"reason":"Expired","code":410' curl -sk --max-time 10 \
  -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/namespaces/default/pods?watch=1&resourceVersion=$RV&timeoutSeconds=2"
fake inject '{"inject":"throttle","count":1,"retry_after":1}' >/dev/null
check throttle-429 '^429 1$' curl -sk -o /dev/null -w '%{http_code} %header{retry-after}' \
  -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/nodes"
cut_watch() {
  curl -sk -N --max-time 20 -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/pods?watch=1&timeoutSeconds=15" \
    >/dev/null &
  local pid=$! rc=0
  sleep 1
  fake inject '{"inject":"cut-watches"}'
  wait "$pid" || rc=$?
  echo " curl-exit=$rc"
}
check cut-watches '"cut":[1-9].* curl-exit=18$' cut_watch
k delete pods -l suite=kappa-conformance --wait=false >/dev/null 2>&1

if out=$(TB="$TB" /usr/bin/python3 "$HERE/python_client_check.py" --kubeconfig "$KC" 2>&1); then
  ok python-client
  printf '%s\n' "$out" | sed 's/^/    /'
else
  bad python-client "$out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
