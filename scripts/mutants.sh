#!/usr/bin/env bash
# Mutation testing of the code that resume and idempotency lean on: the planner, the journal,
# the DNS compare-and-swap and capability inclusion (plus the pure halves of the gate and
# ClusterVersion). Every mutant that survives is a missing test.
#
#   scripts/mutants.sh                 # every mutant of those files (about 20 min on 2 cores)
#   scripts/mutants.sh BASE            # only mutants on lines changed since git rev BASE
#
# cargo-mutants copies the tree and builds without cloud features: these are pure modules, and
# their tests are library tests, so no SDK is compiled. Prints caught / missed / unviable per file.
# The async shells that talk to a server (gate::run_gate, cluster_version::apply) are covered by
# the integration tests, not by `--lib`: their mutants show as missed here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked

# MUTANTS_FILES overrides the list (space-separated paths).
read -r -a files <<< "${MUTANTS_FILES:-src/journal/mod.rs src/journal/state.rs src/journal/files.rs src/plan/mod.rs src/plan/desired.rs src/plan/observed.rs src/plan/cloud.rs src/plan/kube.rs cloud/src/dns.rs src/capabilities/inclusion.rs src/capabilities/cluster_version.rs src/cluster/gate/evaluate.rs src/capabilities/delete.rs src/plan/batch.rs}"
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
out=target/mutants
mkdir -p "$out"
if [ $# -ge 1 ]; then
  git diff "$1" -- "${files[@]}" > "$out/changes.diff"
  args+=(--in-diff "$out/changes.diff")
fi
status=0
cargo mutants --workspace --no-shuffle --output "$out" "${args[@]}" -- --lib || status=$?

python3 - "$out/mutants.out/outcomes.json" <<'PY'
import collections, json, sys
outcomes = json.load(open(sys.argv[1]))["outcomes"]
per = collections.defaultdict(collections.Counter)
missed = []
for o in outcomes:
    scenario = o.get("scenario")
    if not isinstance(scenario, dict) or "Mutant" not in scenario:
        continue
    m = scenario["Mutant"]
    summary = o["summary"]
    kind = {"CaughtMutant": "caught", "MissedMutant": "missed", "Unviable": "unviable",
            "Timeout": "timeout"}.get(summary, summary)
    per[m["file"]][kind] += 1
    if kind == "missed":
        missed.append(f'{m["file"]}:{m["span"]["start"]["line"]}: {m.get("replacement", "")} in {m.get("function", {}).get("function_name", "")}')
print(f'{"file":45} caught missed unviable timeout  caught/viable')
for f, c in sorted(per.items()):
    viable = c["caught"] + c["missed"] + c["timeout"]
    pct = 100.0 * c["caught"] / viable if viable else 100.0
    print(f'{f:45} {c["caught"]:6} {c["missed"]:6} {c["unviable"]:8} {c["timeout"]:7}  {pct:5.1f}%')
for line in missed:
    print("MISSED", line)
PY
exit $status
