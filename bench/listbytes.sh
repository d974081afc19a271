#!/usr/bin/env bash
# listbytes.sh OLD NEW DATA: issue 38's byte check. Starts two apictl binaries in turn on copies of
# one seeded data directory (a scale run's, kept with BENCH_SCALE_DATA: DATA/data) and fetches the
# scale objects' whole list from each as users do:
#   kubectl get -A -o yaml --chunk-size=0   (kubectl's YAML of the unpaged list)
#   curl                                    (curl's user agent: indented JSON)
#   curl -H 'Accept: application/yaml'      (the server's YAML)
#   curl -H "Accept: <kubectl's Table>"     (kubectl get's Table, with kubectl's user agent: compact)
# and fails unless each is byte for byte the same from both, the list's own resourceVersion aside
# (each server's is its etcd's current revision, which the start moves), and the Table's Age cells
# (each is the time from the object's creation to the request).
set -euo pipefail
old=${1:?usage: listbytes.sh OLD-APICTL NEW-APICTL SCALE-DATA-DIR}
new=${2:?usage: listbytes.sh OLD-APICTL NEW-APICTL SCALE-DATA-DIR}
data=${3:?usage: listbytes.sh OLD-APICTL NEW-APICTL SCALE-DATA-DIR}
[ -d "$data/data/etcd" ] || { echo "listbytes.sh: $data/data/etcd: no seeded data there (a scale run's BENCH_SCALE_DATA)" >&2; exit 2; }
for tool in kubectl curl; do
  command -v "$tool" >/dev/null || { echo "listbytes.sh: $tool not on PATH" >&2; exit 2; }
done
resource=records.scale.example.com
path=/apis/scale.example.com/v1/records
table='application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT && echo "keeping $work"

unrv() { # unrv FILE RE REPLACEMENT: the first match of RE and the last line matching it replaced
  sed -i "0,/$2/s//$3/" "$1"
  local last
  last=$(grep -n "$2" "$1" | tail -1 | cut -d: -f1 || true)
  [ -z "$last" ] || sed -i "${last}s/$2/$3/" "$1"
}

fetch() { # fetch NAME BINARY
  local name=$1 bin=$2 port
  cp -a "$data/data" "$work/$name-data"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
  "$bin" serve --data-dir "$work/$name-data" --bind-address 127.0.0.1 --insecure-port "$port" --secure-port 0 \
    --etcd-prefix /registry >"$work/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.1
  done
  # The custom objects' cache fills after /readyz; a LIST waits for it.
  local url="http://127.0.0.1:$port$path"
  local began=$(date +%s.%N)
  kubectl --server "http://127.0.0.1:$port" get "$resource" -A -o yaml --chunk-size=0 >"$work/$name.kubectl.yaml"
  echo "$name: kubectl -o yaml --chunk-size=0: $(stat -c %s "$work/$name.kubectl.yaml") bytes in $(echo "$(date +%s.%N) - $began" | bc) s"
  curl -sSf "$url" -o "$work/$name.curl.json"
  curl -sSf -H 'Accept: application/yaml' "$url" -o "$work/$name.curl.yaml"
  curl -sSf -A kubectl/v1.37.2 -H "Accept: $table" "$url" -o "$work/$name.curl.table"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  rm -rf "$work/$name-data"
  # The list's own resourceVersion: the first one of a built-in kind's list and of a Table, the
  # last one of a custom resource's (its keys sorted, metadata after items, on a line of its own
  # when indented). Those are masked; an item's is the same from both servers.
  unrv "$work/$name.curl.json" '"resourceVersion": "[0-9]*"' '"resourceVersion": "LIST"'
  unrv "$work/$name.curl.yaml" '^  resourceVersion: "[0-9]*"' '  resourceVersion: "LIST"'
  sed -i -e '0,/"resourceVersion":"[0-9]*"/s//"resourceVersion":"LIST"/' \
    -e 's/"[0-9][0-9a-z]*"\],"object"/"AGE"],"object"/g' "$work/$name.curl.table"
}
fetch old "$old"
fetch new "$new"
status=0
for f in kubectl.yaml curl.json curl.yaml curl.table; do
  if cmp -s "$work/old.$f" "$work/new.$f"; then
    echo "$f: identical, $(stat -c %s "$work/new.$f") bytes, $(grep -o '"uid"\|^    uid: \|^      uid: ' "$work/new.$f" | wc -l) uids"
  else
    echo "$f: DIFFERENT ($(cmp "$work/old.$f" "$work/new.$f" | head -1))"; status=1
  fi
done
exit $status
