#include "broker/backend/kubernetes/manifests.h"

#include <fmt/format.h>

#include "broker/util/base64.h"

namespace skyslurm::kube {
namespace {

Json::Value Labels(const ManifestInput& in) {
  Json::Value l(Json::objectValue);
  l[kManagedByLabel] = "skyslurm";
  l[kSkyIdLabel] = in.sky_id;
  l[kJobIdLabel] = in.native_id;
  return l;
}

Json::Value Meta(const ManifestInput& in) {
  Json::Value m(Json::objectValue);
  m["name"] = ObjectName(in.native_id);
  m["namespace"] = in.namespace_name;
  m["labels"] = Labels(in);
  return m;
}

Json::Value Env(const std::string& name, const std::string& value) {
  Json::Value e(Json::objectValue);
  e["name"] = name;
  e["value"] = value;
  return e;
}

Json::Value Toleration(const char* key) {
  Json::Value t(Json::objectValue);
  t["key"] = key;
  t["operator"] = "Exists";
  t["effect"] = "NoSchedule";
  return t;
}

}  // namespace

std::string ObjectName(const std::string& native_id) { return "skyslurm-" + native_id; }

std::string EntryPointScript() {
  return R"(#!/bin/sh
# skyslurm: the batch script in one pod of an Indexed Job, as Slurm runs it on
# one node of its allocation.
dir=/var/run/skyslurm
name=$SKYSLURM_OBJECT
n=$SKYSLURM_PODS
rank=${JOB_COMPLETION_INDEX:-0}
# Every pod's address, by rank, from the headless Service's names.
ips=
i=0
waited=0
while [ "$i" -lt "$n" ]; do
  set -- $(getent hosts "$name-$i.$name" 2>/dev/null)
  if [ -z "${1:-}" ]; then
    if [ "$waited" -ge 600 ]; then
      echo "skyslurm: pod $name-$i did not get an address within 600 s" >&2
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
    continue
  fi
  ips="$ips${ips:+
}$1"
  i=$((i + 1))
done
if [ "$n" -gt 1 ]; then nodelist="$name-[0-$((n - 1))]"; else nodelist="$name-0"; fi
export SKYPILOT_NODE_IPS="$ips" SKYPILOT_NUM_NODES="$n" SKYPILOT_NODE_RANK="$rank"
export SKYPILOT_NUM_GPUS_PER_NODE="$SKYSLURM_GPUS_PER_NODE"
export SKYPILOT_CLUSTER_INFO="{\"cloud\": \"kubernetes\", \"cluster\": \"$SKYSLURM_CLUSTER\", \"region\": \"$SKYSLURM_CLUSTER\", \"zone\": \"$SKYSLURM_NAMESPACE\"}"
export SLURM_JOB_ID="$SKYSLURM_JOB_ID" SLURM_JOBID="$SKYSLURM_JOB_ID"
export SLURM_NNODES="$n" SLURM_JOB_NUM_NODES="$n" SLURM_NTASKS="$n" SLURM_NPROCS="$n"
export SLURM_NODEID="$rank" SLURM_PROCID="$rank" SLURM_LOCALID=0
export SLURM_JOB_NODELIST="$nodelist" SLURM_NODELIST="$nodelist"
export SLURMD_NODENAME="$name-$rank" SLURM_CLUSTER_NAME="$SKYSLURM_CLUSTER"
# The job's folder, when it travels with the job: unpacked before the script
# starts (the container's working directory is in it).
if [ -f "$dir/folder.tar.gz" ]; then
  mkdir -p /skyslurm/work && tar -xzf "$dir/folder.tar.gz" -C /skyslurm/work || {
    echo "skyslurm: the job's folder could not be unpacked into /skyslurm/work" >&2
    exit 1
  }
fi
export SLURM_GPUS_ON_NODE="$SKYSLURM_GPUS_PER_NODE" SLURM_SUBMIT_DIR="$PWD"
unset SKYSLURM_OBJECT SKYSLURM_PODS SKYSLURM_GPUS_PER_NODE SKYSLURM_NAMESPACE
# The pod's own srun and module, first on PATH.
bin=$(mktemp -d 2>/dev/null || echo "/tmp/skyslurm-bin-$$")
mkdir -p "$bin" && cp "$dir/srun" "$bin/srun" && cp "$dir/module" "$bin/module" &&
  cp "$dir/module" "$bin/ml" && chmod 755 "$bin/srun" "$bin/module" "$bin/ml"
export PATH="$bin:$PATH"
exec "$dir/script" "$@"
)";
}

std::string PodSrunScript() {
  return R"(#!/bin/sh
# skyslurm on Kubernetes: this pod is one node of the job, and srun runs its
# command here, once. Options that only size the step are accepted and have
# nothing to do.
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -n|-N|-c|-J|-o|-e|-i|-t|-p|-G|-D|-A|-q|-m|-d|-C|-L|-x|-w|-K|-W|-T|-u) shift 2 ;;
    --ntasks|--nodes|--cpus-per-task|--job-name|--output|--error|--input|--time|--partition|\
    --gpus|--gres|--mem|--mem-per-cpu|--mem-per-gpu|--ntasks-per-node|--export|--chdir|\
    --account|--qos|--distribution|--cpu-bind|--mpi|--gpus-per-task|--gpus-per-node|\
    --constraint|--kill-on-bad-exit|--wait|--threads|--gpu-bind|--cpus-per-gpu|--label|\
    --unbuffered) case "$1" in --label|--unbuffered) shift ;; *) shift 2 ;; esac ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "srun: fatal: No command given to execute." >&2
  exit 1
fi
exec "$@"
)";
}

std::string PodModuleScript() {
  return R"(#!/bin/sh
# skyslurm on Kubernetes: the image is what the script's modules were (the
# site's images map chose it); a module command has nothing left to do.
echo "module $*: skyslurm: on Kubernetes the image provides the software; nothing to load" >&2
exit 0
)";
}

// pyxis' --container-mounts as the pod's volumes (kube::PodMount), from the
// roots the cluster's paths name.
void AddMounts(const kube::JobShape& shape, Json::Value& container, Json::Value& pod) {
  for (std::size_t i = 0; i < shape.mounts.size(); ++i) {
    const kube::PodMount& asked = shape.mounts[i];
    Json::Value mounted(Json::objectValue);
    mounted["name"] = fmt::format("mount-{}", i);
    mounted["mountPath"] = asked.mount_path;
    if (!asked.sub_path.empty()) mounted["subPath"] = asked.sub_path;
    if (asked.read_only) mounted["readOnly"] = true;
    container["volumeMounts"].append(mounted);
  }

  for (std::size_t i = 0; i < shape.mounts.size(); ++i) {
    const kube::PodMount& asked = shape.mounts[i];
    Json::Value volume_of(Json::objectValue);
    volume_of["name"] = fmt::format("mount-{}", i);
    if (asked.claim) {
      volume_of["persistentVolumeClaim"]["claimName"] = asked.source;
      if (asked.read_only) volume_of["persistentVolumeClaim"]["readOnly"] = true;
    } else {
      volume_of["hostPath"]["path"] = asked.source;
      volume_of["hostPath"]["type"] = "Directory";
    }
    pod["volumes"].append(volume_of);
  }
}

Manifests BuildManifests(const ManifestInput& in) {
  const std::string name = ObjectName(in.native_id);
  Manifests m;

  m.config_map["apiVersion"] = "v1";
  m.config_map["kind"] = "ConfigMap";
  m.config_map["metadata"] = Meta(in);
  m.config_map["data"]["script"] = in.script;
  m.config_map["data"]["entrypoint.sh"] = EntryPointScript();
  m.config_map["data"]["srun"] = PodSrunScript();
  m.config_map["data"]["module"] = PodModuleScript();
  if (!in.folder_archive.empty()) {
    m.config_map["binaryData"]["folder.tar.gz"] = Base64Encode(in.folder_archive);
  }

  m.service["apiVersion"] = "v1";
  m.service["kind"] = "Service";
  m.service["metadata"] = Meta(in);
  m.service["spec"]["clusterIP"] = "None";
  m.service["spec"]["publishNotReadyAddresses"] = true;
  m.service["spec"]["selector"][kJobIdLabel] = in.native_id;

  Json::Value container(Json::objectValue);
  container["name"] = "job";
  container["image"] = in.shape.image;
  container["command"].append("/bin/sh");
  container["command"].append(std::string(kMountPath) + "/entrypoint.sh");
  for (const auto& a : in.script_args) container["args"].append(a);
  if (!in.workdir.empty()) container["workingDir"] = in.workdir;
  Json::Value env(Json::arrayValue);
  env.append(Env("SKYSLURM_OBJECT", name));
  env.append(Env("SKYSLURM_PODS", std::to_string(in.shape.pods)));
  env.append(Env("SKYSLURM_GPUS_PER_NODE", std::to_string(in.shape.gpus_per_pod)));
  env.append(Env("SKYSLURM_NAMESPACE", in.namespace_name));
  env.append(Env("SKYSLURM_JOB_ID", in.native_id));
  env.append(Env("SLURM_JOB_NAME", in.shape.job_name));
  bool has_cluster = false;
  std::size_t kept = 0;
  for (const auto& [k, v] : in.env) {
    has_cluster = has_cluster || k == "SKYSLURM_CLUSTER";
    // skyslurm's own (the task id, the cluster, restart and array counts):
    // plain values. The job's (its --export's values, a task's secrets):
    // in the Secret, each under a key of its own (a variable's name may
    // hold what a key may not).
    if (k.starts_with("SKYSLURM_") || k.starts_with("SKYPILOT_")) {
      env.append(Env(k, v));
      continue;
    }
    if (m.secret.isNull()) {
      m.secret["apiVersion"] = "v1";
      m.secret["kind"] = "Secret";
      m.secret["metadata"] = Meta(in);
      m.secret["type"] = "Opaque";
    }
    const std::string key = fmt::format("e{}", kept++);
    m.secret["data"][key] = Base64Encode(v);
    Json::Value e(Json::objectValue);
    e["name"] = k;
    e["valueFrom"]["secretKeyRef"]["name"] = name;
    e["valueFrom"]["secretKeyRef"]["key"] = key;
    env.append(e);
  }
  if (!has_cluster) env.append(Env("SKYSLURM_CLUSTER", in.cluster));
  container["env"] = env;
  Json::Value& res = container["resources"];
  res["requests"]["cpu"] = fmt::format("{}m", in.shape.millicores);
  if (in.shape.memory_mb > 0) {
    res["requests"]["memory"] = fmt::format("{}Mi", in.shape.memory_mb);
    res["limits"]["memory"] = fmt::format("{}Mi", in.shape.memory_mb);
  }
  if (in.shape.gpus_per_pod > 0) {
    res["limits"]["nvidia.com/gpu"] = std::to_string(in.shape.gpus_per_pod);
  }
  Json::Value mount(Json::objectValue);
  mount["name"] = "skyslurm";
  mount["mountPath"] = kMountPath;
  mount["readOnly"] = true;
  container["volumeMounts"].append(mount);
  if (!in.folder_archive.empty()) {
    Json::Value work(Json::objectValue);
    work["name"] = "skyslurm-work";
    work["mountPath"] = kFolderPath;
    container["volumeMounts"].append(work);
  }

  Json::Value pod(Json::objectValue);
  pod["restartPolicy"] = "Never";
  pod["subdomain"] = name;
  AddMounts(in.shape, container, pod);
  pod["containers"].append(container);
  Json::Value volume(Json::objectValue);
  volume["name"] = "skyslurm";
  volume["configMap"]["name"] = name;
  volume["configMap"]["defaultMode"] = 0755;
  pod["volumes"].append(volume);
  if (!in.folder_archive.empty()) {
    Json::Value work(Json::objectValue);
    work["name"] = "skyslurm-work";
    work["emptyDir"] = Json::Value(Json::objectValue);
    pod["volumes"].append(work);
  }
  if (!in.shape.gpu_label.empty()) pod["nodeSelector"][in.shape.gpu_label] = in.shape.gpu_type;
  if (in.shape.gpus_per_pod > 0) {
    pod["tolerations"].append(Toleration("nvidia.com/gpu"));
    pod["tolerations"].append(Toleration("skypilot.co/gpu"));
  }
  if (in.shape.deadline_seconds > 0)
    pod["activeDeadlineSeconds"] = Json::Int64(in.shape.deadline_seconds);

  m.job["apiVersion"] = "batch/v1";
  m.job["kind"] = "Job";
  m.job["metadata"] = Meta(in);
  m.job["metadata"]["annotations"]["skyslurm.io/job-name"] = in.shape.job_name;
  m.job["metadata"]["annotations"]["skyslurm.io/user"] = in.user;
  Json::Value& spec = m.job["spec"];
  spec["completionMode"] = "Indexed";
  spec["completions"] = Json::Int64(in.shape.pods);
  spec["parallelism"] = Json::Int64(in.shape.pods);
  // The job's own failure ends it: skyslurm (a managed job) or the user
  // decides what comes next, as with Slurm.
  spec["backoffLimit"] = 0;
  if (in.restartable) {
    // A disruption (eviction, preemption, node loss) does not count: the
    // pod is made again, as Slurm requeues a job after a node failure.
    Json::Value rule(Json::objectValue);
    rule["action"] = "Ignore";
    Json::Value condition(Json::objectValue);
    condition["type"] = "DisruptionTarget";
    rule["onPodConditions"].append(condition);
    spec["podFailurePolicy"]["rules"].append(rule);
  }
  if (in.shape.deadline_seconds > 0)
    spec["activeDeadlineSeconds"] = Json::Int64(in.shape.deadline_seconds);
  spec["template"]["metadata"]["labels"] = Labels(in);
  spec["template"]["spec"] = pod;
  return m;
}

}  // namespace skyslurm::kube
