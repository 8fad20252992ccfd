#!/usr/bin/env bash
# demo.sh (make demo): a local single-node cluster, pressure installed from local images, a
# leaking pod evicted by pressure-agent before the kubelet or the OOM killer act. Leaves the
# cluster up; `make demo-down` stops it. Needs root (containerd, kubelet, cgroups).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo}"

state="${PRESSURE_STATE:-${HOME}/.cache/pressure/cluster}"
ns=pressure-system
demo_ns=demo
tag=demo
pods_memory=2Gi      # limit of the pods cgroup (kubeReserved = MemTotal - this)
kubelet_evict=200Mi  # the kubelet's evictionHard (memory.available and allocatableMemory.available)
agent_headroom_mib=256
t0=$(date +%s)

step() { printf '\n\033[1m== %s [%ds]\033[0m\n' "$*" $(($(date +%s) - t0)); }
say() { printf '   %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root: the node runs containerd and a kubelet"
[[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]] || die "needs the cgroup v1 memory controller"

step "1/7 Kubernetes binaries and a single-node cluster"
say "the first build of Kubernetes v1.37.2 takes many minutes (27 min to over an hour measured on 2 busy cores); later runs reuse it"
bins="$(hack/build-k8s.sh)"
export PATH="${bins}:${repo}/bin:${PATH}"
kconf="$(mktemp /tmp/pressure-demo-kubelet.XXXXXX.yaml)"
cat >"${kconf}" <<EOF
evictionHard:
  memory.available: ${kubelet_evict}
  allocatableMemory.available: ${kubelet_evict}
kernelMemcgNotification: true
evictionPressureTransitionPeriod: 20s
EOF
say "kubelet: pods cgroup limited to ${pods_memory}, evictionHard memory.available and allocatableMemory.available < ${kubelet_evict}"
hack/cluster.sh down >/dev/null 2>&1 || true
hack/cluster.sh up --node --pods-memory "${pods_memory}" --kubelet-config "${kconf}"
rm -f "${kconf}"
eval "$(hack/cluster.sh env)"
node="$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')"
kubelet_config="${state}/node/kubelet-config.yaml"
say "node ${node} Ready; KUBECONFIG=${KUBECONFIG}"

step "2/7 pressure images and the Helm chart"
say "building the images (no Docker): bin/images/pressure-{agent,janitor}.tar"
go run ./hack/imagebuild -bin bin -out bin/images -registry pressure.local -tag "${tag}" >/dev/null
for c in pressure-agent pressure-janitor; do
	ctr --address "${state}/node/containerd.sock" -n k8s.io images import "bin/images/${c}.tar" >/dev/null
	say "imported pressure.local/${c}:${tag} into the node's containerd"
done
say "building helm (first time only: a few minutes)"
helm="$(hack/install-helm.sh)"
"${helm}" install pressure deploy/helm/pressure --namespace "${ns}" --create-namespace \
	--set image.pullPolicy=Never --set image.tag="${tag}" \
	--set agent.kubeletConfig.hostPath="${kubelet_config}" --set dryRun=false \
	--set janitor.config.ttl=30s --set janitor.config.keepPerOwner=0 >/dev/null
say "helm install done; waiting for the agent and janitor pods to be Ready"
for i in $(seq 1 180); do
	ready="$(kubectl -n "${ns}" get pods -o jsonpath='{range .items[*]}{.metadata.labels.app\.kubernetes\.io/component}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')"
	if [[ "$(grep -c '^agent=True' <<<"${ready}")" == 1 && "$(grep -c '^janitor=True' <<<"${ready}")" == 2 ]]; then break; fi
	(( i == 180 )) && { kubectl -n "${ns}" get pods -o wide; die "pods not Ready after 3 minutes"; }
	sleep 1
done
kubectl -n "${ns}" get pods -o wide

step "3/7 the node before pressure: kubectl pressure explain ${node}"
for i in 1 2 3 4 5 6; do
	if out="$(kubectl-pressure explain "${node}" 2>&1)"; then break; fi
	(( i == 6 )) && die "kubectl-pressure explain ${node}: ${out}"
	sleep 5 # the kubelet's first stats
done
sed -n '1,/^NODE CONDITIONS/p' <<<"${out}" | sed '$d'
say "(the full output goes on with the node conditions and what the kubelet would do)"

step "4/7 a workload of three QoS classes"
kubectl create namespace "${demo_ns}" >/dev/null
kubectl apply -n "${demo_ns}" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: guaranteed}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: stress
    image: pressure.local/stress:v1
    imagePullPolicy: Never
    args: [mem, --rate, 64Mi, --target, 100Mi]
    resources: {requests: {cpu: 20m, memory: 200Mi}, limits: {cpu: 20m, memory: 200Mi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: burstable}
spec:
  replicas: 1
  selector: {matchLabels: {app: burstable}}
  template:
    metadata: {labels: {app: burstable}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: stress
        image: pressure.local/stress:v1
        imagePullPolicy: Never
        args: [mem, --rate, 64Mi, --target, 150Mi]
        resources: {requests: {cpu: 10m, memory: 100Mi}, limits: {memory: 400Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: besteffort}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: stress
    image: pressure.local/stress:v1
    imagePullPolicy: Never
    args: [sleep]
EOF
kubectl -n "${demo_ns}" wait --for=condition=Ready pod --all --timeout=2m >/dev/null
kubectl -n "${demo_ns}" get pods -o custom-columns='POD:.metadata.name,QOS:.status.qosClass,PHASE:.status.phase,REQUEST:.spec.containers[0].resources.requests.memory'

step "5/7 a leaking pod (Deployment leak: stress mem --rate 128Mi, no target)"
cg=/sys/fs/cgroup/memory/kubepods
limit=$(cat "${cg}/memory.limit_in_bytes")
kubelet_thr=$((200 << 20))
agent_thr=$((kubelet_thr + (agent_headroom_mib << 20)))
say "pods cgroup limit $((limit >> 20))Mi; the agent acts below $((agent_thr >> 20))Mi available (kubelet's 200Mi + headroom ${agent_headroom_mib}Mi), the kubelet below 200Mi"
oom_before=$(dmesg 2>/dev/null | grep -c 'Killed process' || true)
cgoom_before=$(awk '$1=="oom_kill"{print $2}' "${cg}/memory.oom_control")
samples="$(mktemp /tmp/pressure-demo-samples.XXXXXX)"
# sample allocatableMemory.available as the kubelet computes it: limit - (usage - inactive_file)
( while :; do
	u=$(cat "${cg}/memory.usage_in_bytes"); i=$(awk '$1=="total_inactive_file"{print $2}' "${cg}/memory.stat")
	echo "$(date +%s.%N) $((limit - u + i))"; sleep 0.1
done ) >"${samples}" 2>/dev/null &
sampler=$!
trap 'kill ${sampler} 2>/dev/null || true' EXIT
kubectl apply -n "${demo_ns}" -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: leak}
spec:
  replicas: 1
  selector: {matchLabels: {app: leak}}
  template:
    metadata: {labels: {app: leak}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: stress
        image: pressure.local/stress:v1
        imagePullPolicy: Never
        args: [mem, --rate, 128Mi, --target, "0"]
        resources: {requests: {cpu: 10m, memory: 64Mi}}
EOF
leak_pod=""
for i in $(seq 1 240); do
	leak_pod="$(kubectl -n "${demo_ns}" get events --field-selector reason=PressureEviction -o jsonpath='{.items[0].involvedObject.name}' 2>/dev/null || true)"
	[[ -n "${leak_pod}" ]] && break
	(( i % 5 == 0 )) && say "$(tail -1 "${samples}" | awk '{printf "allocatableMemory.available %dMi", $2/1048576}')"
	(( i == 240 )) && die "no PressureEviction event within 4 minutes"
	sleep 1
done
sleep 3
kill "${sampler}" 2>/dev/null || true
evict_line="$(kubectl -n "${ns}" logs -l app.kubernetes.io/component=agent --tail=-1 | grep '"msg":"evict"' | grep "${leak_pod}" | head -1)"
evict_time="$(python3 -c 'import json,sys,datetime; print(datetime.datetime.fromisoformat(json.loads(sys.argv[1])["time"]).timestamp())' "${evict_line}")"
cross_time="$(awk -v t="${agent_thr}" '$2 < t {print $1; exit}' "${samples}")"
min_avail="$(awk 'NR==1||$2<m{m=$2} END{print m}' "${samples}")"
say "pressure-agent evicted ${leak_pod}: $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("signal %s observed %s threshold %s rung %s outcome %s" % (d["signal"], d["observed"], d["threshold"], d["rung"], d["outcome"]))' "${evict_line}")"
if [[ -n "${cross_time}" ]]; then
	say "$(awk -v a="${cross_time}" -v b="${evict_time}" 'BEGIN{printf "the agent logged the eviction %.2fs after the first sample below its threshold (the sampler reads every 0.1s)", b-a}')"
else
	say "the 0.1s sampler never saw available below the agent threshold (the agent was faster than the sampler)"
fi
say "lowest allocatableMemory.available seen: $((min_avail >> 20))Mi (the kubelet's threshold: 200Mi)"
kubelet_evictions=$(kubectl get events -A --field-selector reason=Evicted -o name | wc -l)
oom_after=$(dmesg 2>/dev/null | grep -c 'Killed process' || true)
cgoom_after=$(awk '$1=="oom_kill"{print $2}' "${cg}/memory.oom_control")
say "kubelet evictions (Events reason=Evicted): ${kubelet_evictions}"
say "OOM kills: $((oom_after - oom_before)) new kernel 'Killed process' lines, $((cgoom_after - cgoom_before)) in the pods cgroup (memory.oom_control oom_kill)"
say "node MemoryPressure: $(kubectl get node "${node}" -o jsonpath='{.status.conditions[?(@.type=="MemoryPressure")].status}')"
rm -f "${samples}"

step "6/7 what explains it"
say "the Event on the evicted pod (kubectl -n ${demo_ns} get events --field-selector involvedObject.name=${leak_pod}):"
kubectl -n "${demo_ns}" get events --field-selector "involvedObject.name=${leak_pod}" \
	-o custom-columns='TYPE:.type,REASON:.reason,FROM:.source.component,MESSAGE:.message' |
	grep -v MissingClusterDNS | sed 's/^/   /' # (the test cluster runs no DNS)
say "the node's taints (ours only while under pressure) and the replacement kept off by the node anti-affinity the chart's admission policy gave it:"
kubectl get node "${node}" -o jsonpath='{range .spec.taints[*]}   {.key}={.value}:{.effect}{"\n"}{end}'
sleep 3
kubectl -n "${demo_ns}" get pods -l app=leak -o wide | sed 's/^/   /'
repl="$(kubectl -n "${demo_ns}" get pods -l app=leak --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)"
if [[ -n "${repl}" ]]; then
	kubectl -n "${demo_ns}" get events --field-selector "involvedObject.name=${repl},reason=FailedScheduling" \
		-o custom-columns='REASON:.reason,MESSAGE:.message' | sed 's/^/   /'
fi
say "pressure evicts through the Eviction API, which deletes the pod: no Failed/Evicted shell is left."
say "The kubelet's own evictions leave one; the janitor deletes such shells after its TTL (30s here)"
say "and records each on the workload. To show it, a pod of Deployment burstable is marked"
say "Failed/Evicted the way the kubelet would (kubectl patch --subresource=status):"
shell="$(kubectl -n "${demo_ns}" get pods -l app=burstable -o jsonpath='{.items[0].metadata.name}')"
kubectl -n "${demo_ns}" patch pod "${shell}" --subresource=status --type=merge -p \
	'{"status":{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory. (marked by make demo)"}}' >/dev/null
say "waiting for the janitor (TTL 30s) to delete ${shell}"
for i in $(seq 1 120); do
	kubectl -n "${demo_ns}" get pod "${shell}" >/dev/null 2>&1 || break
	(( i == 120 )) && die "janitor did not delete ${shell} within 2 minutes"
	sleep 1
done
say "the janitor collects one workload's deletions for a minute and then writes one Event on it: waiting for it (up to 90s)"
for i in $(seq 1 90); do
	[[ -n "$(kubectl -n "${demo_ns}" get events --field-selector "involvedObject.kind=Deployment,reason=EvictedPodDeleted" -o name)" ]] && break
	(( i == 90 )) && die "no EvictedPodDeleted Event on a Deployment in ${demo_ns} within 90s of the deletion"
	(( i % 15 == 0 )) && say "still waiting for the janitor's Event (${i}s)"
	sleep 1
done
say "the janitor's record (kubectl -n ${demo_ns} get events --field-selector involvedObject.kind=Deployment,reason=EvictedPodDeleted):"
kubectl -n "${demo_ns}" get events --field-selector "involvedObject.kind=Deployment,reason=EvictedPodDeleted" \
	-o custom-columns='OBJECT:.involvedObject.name,REASON:.reason,FROM:.source.component,MESSAGE:.message' | sed 's/^/   /'

step "7/7 the cluster stays up"
say "export KUBECONFIG=${KUBECONFIG}"
say "export PATH=${bins}:${repo}/bin:\$PATH   # kubectl, kubectl-pressure"
say "kubectl pressure explain ${node}"
say "make demo-down   # stop it and clean up"
